/**
 * The status page at `/` as a person sees it: `serve` after a real `sync`, opened in headless
 * Chromium (Debian's `chromium`, driven by playwright-core; `bash .ci/run` installs it), with a
 * webhook sink delivering the change feed to a receiver of the test's. Its screenshots are kept
 * when a test fails (the path is printed), and always under `TEST_SCREENSHOT_DIR` when set.
 */
import assert from 'node:assert/strict';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { type Browser, chromium, type Page } from 'playwright-core';
import { readFeedStatus } from '../../src/db/queries/sink-status.js';
import { queryRows } from '../../src/db/rows.js';
import { createSimulator, type Simulator } from '../../src/simulator/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { insertRows } from '../helpers/feed.js';
import { freePort } from '../helpers/free-port.js';
import { fetchText } from '../helpers/http-surface.js';
import { type ScreenshotFolder, screenshotFolder } from '../helpers/screenshots.js';
import { waitFor } from '../helpers/wait-for.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { type CliRun, runCli } from './sync-cli-run.js';

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
];

let simulator: Simulator;
let testDb: TestDatabase;
let env: Record<string, string>;
let serve: CliRun | undefined;
let browser: Browser | undefined;
let page: Page;
let base: string;
let shots: ScreenshotFolder;
let receiver: WebhookReceiver;
const consoleErrors: string[] = [];

before(async () => {
  // Fail, never skip: without the browser the page is not tested at all.
  if (!existsSync(CHROMIUM))
    throw new Error(
      `${CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium; bash .ci/run does)`,
    );
  shots = screenshotFolder('status-page-');
  simulator = createSimulator({ records: 300, seed: 73 });
  const { url } = await simulator.listen();
  testDb = await createTestDatabase();
  receiver = await startWebhookReceiver('status-page-webhook-secret');
  env = {
    LEDGER_BASE_URL: url,
    DATABASE_URL: testDb.url,
    LEDGER_REQUESTS_PER_SECOND: '0',
    LOG_LEVEL: 'silent',
    LEDGER_WEBHOOK_URL: receiver.url,
    LEDGER_WEBHOOK_SECRET: 'status-page-webhook-secret',
  };
  const synced = await runCli(['sync'], env).done;
  assert.equal(synced.code, 0, synced.stderr);
  const port = await freePort();
  serve = runCli(['serve', '--http-port', String(port)], env);
  base = `http://127.0.0.1:${port}`;
  await waitFor('serve to listen', async () => (await fetchText(`${base}/health`).catch(() => null))?.status);
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
  page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => consoleErrors.push(`pageerror: ${error.message}`));
});

after(async () => {
  await browser?.close();
  if (serve && serve.child.exitCode === null) {
    serve.child.kill('SIGTERM');
    await serve.done;
  }
  await simulator?.close();
  await receiver?.close();
  await testDb?.drop();
  shots?.finish();
});

/** `it`, and when the test fails, a screenshot of the page as it then was; the folder is kept. */
function itShot(name: string, test: () => Promise<void>): void {
  it(name, async () => {
    try {
      await test();
    } catch (error) {
      shots.failed();
      const file = `failed-${name.replace(/\W+/g, '-').slice(0, 40)}.png`;
      await page?.screenshot({ path: join(shots.path, file), fullPage: true }).catch(() => {});
      throw error;
    }
  });
}

/** The chart's line as [x, y] points. */
async function chartPoints(): Promise<Array<[number, number]>> {
  const d = (await page.getAttribute('svg#throughput path.series', 'd')) ?? '';
  return [...d.matchAll(/(-?[\d.]+),(-?[\d.]+)/g)].map((m) => [Number(m[1]), Number(m[2])]);
}

describe('the status page in Chromium', () => {
  itShot('loads, charts the records just synced, shows the stream, and logs no error', async () => {
    const response = await page.goto(`${base}/`, { waitUntil: 'load' });
    assert.equal(response?.status(), 200);
    assert.equal(await page.title(), 'ledger-indexer status');
    assert.equal((await page.textContent('#headline'))?.trim(), 'every stream complete');

    // The chart: 60 minutes drawn, the sync's minute above the baseline, all 300 records counted.
    const chart = page.locator('svg#throughput');
    const box = await chart.boundingBox();
    assert.ok(box !== null && box.width > 100 && box.height > 50, `chart box ${JSON.stringify(box)}`);
    const points = await chartPoints();
    assert.equal(points.length, 60);
    const ys = points.map(([, y]) => y);
    assert.ok(Math.min(...ys) < Math.max(...ys), 'some minute above the baseline');
    assert.equal(await page.getAttribute('svg#throughput path.series', 'data-total'), '300');
    const drawn = await page.locator('svg#throughput path.series').boundingBox();
    assert.ok(drawn !== null && drawn.height > 10, `line box ${JSON.stringify(drawn)}`);

    // The synced stream's row: complete, at the simulator's head, not behind the service.
    const row = page.locator('tr.stream[data-stream="txs"]');
    assert.equal(await row.count(), 1);
    const text = (await row.locator('td').allTextContents()).join(' ').replace(/\s+/g, ' ');
    assert.match(text, /^txs complete /);
    assert.ok(text.includes(simulator.headRawId().toLocaleString('en-US')), text);
    assert.match(text, /0 rawIds behind the service/);
    assert.match((await page.textContent('#totals')) ?? '', /records stored\s*300/);
    assert.match((await page.textContent('#verify-outcome')) ?? '', /never run/);

    const screenshot = join(shots.path, 'status-page.png');
    await page.screenshot({ path: screenshot, fullPage: true });
    assert.ok(existsSync(screenshot) && statSync(screenshot).size > 0, 'screenshot saved');
    assert.deepEqual(consoleErrors, []);
  });

  itShot('shows the last verify once verify has stored it', async () => {
    const verified = await runCli(['verify'], env).done;
    assert.equal(verified.code, 0, verified.stdout + verified.stderr);
    const runs = await queryRows<{ complete: boolean; summary: { streams: number; conflicts: number } }>(
      testDb.database.db,
      sql`SELECT complete, summary FROM verify_runs`,
    );
    assert.equal(runs.length, 1);
    assert.equal(runs[0]?.complete, true);
    assert.equal(runs[0]?.summary.streams, 1);
    assert.equal(runs[0]?.summary.conflicts, 0);

    await page.reload({ waitUntil: 'load' });
    const outcome = ((await page.textContent('#verify-outcome')) ?? '').replace(/\s+/g, ' ');
    assert.match(outcome, /^complete finished \d+ s ago \(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC, took \d+ s\)$/);
    assert.match((await page.textContent('#verify')) ?? '', /1 of 1 stream\(s\) complete/);
    assert.deepEqual(consoleErrors, []);
  });

  itShot(
    'follows the webhook sink as new records are stored and a batch is refused, refreshing itself',
    async () => {
      // The sink has delivered what sync stored: the page shows it at the feed's head.
      const caughtUp = await waitFor('the sink at the head', async () => {
        const feed = await readFeedStatus(testDb.database.db);
        const sink = feed.sinks.find((s) => s.name === 'webhook');
        return feed.head > 0 && sink?.position === feed.head ? feed.head : null;
      });
      // A reader that names itself polls this process's feed from five events before the head.
      const from = caughtUp - 5;
      assert.equal((await fetchText(`${base}/feed?after=${from}&consumer=reporting`)).status, 200);
      await page.reload({ waitUntil: 'load' });
      const reader = (await page.locator('tr.feed-reader').allTextContents()).join('\n');
      assert.match(
        reader,
        new RegExp(`^reporting\\s*poll.*${from.toLocaleString('en-US')}\\s*5 positions behind`),
      );
      const row = page.locator('tr.sink[data-sink="webhook"]');
      const cellText = async (name: string) => ((await row.locator(`td.${name}`).textContent()) ?? '').trim();
      assert.equal(await cellText('position'), caughtUp.toLocaleString('en-US'));
      assert.equal(await cellText('lag'), 'at the head');
      assert.equal(await cellText('dead-letters'), '0');
      assert.match(
        (await page.textContent('#feed-head')) ?? '',
        new RegExp(`head at position ${caughtUp.toLocaleString('en-US')}`),
      );

      // The receiver refuses what comes next; new records are stored.
      receiver.setScript(() => ({ status: 422, body: 'not this one' }));
      const first = simulator.headRawId() + 1000;
      await insertRows(
        testDb.database.db,
        [0, 1, 2].map((i) => ({ rawId: first + i })),
      );
      const moved = await waitFor('the sink past the refused batch', async () => {
        const feed = await readFeedStatus(testDb.database.db);
        const sink = feed.sinks.find((s) => s.name === 'webhook');
        return sink !== undefined && sink.position > caughtUp && sink.deadLetters === 1
          ? sink.position
          : null;
      });

      // The page refreshes by itself (every 10 s): it comes to show both, with no reload from here.
      let navigations = 0;
      const counted = () => {
        navigations += 1;
      };
      page.on('framenavigated', counted);
      await waitFor(
        'the page to show the dead letter',
        async () =>
          (
            await row
              .locator('td.dead-letters')
              .textContent({ timeout: 1000 })
              .catch(() => null)
          )?.trim() === '1',
        { timeoutMs: 25_000, everyMs: 250 },
      );
      page.off('framenavigated', counted);
      assert.ok(navigations >= 1, 'the page reloaded itself');
      assert.equal(await cellText('position'), moved.toLocaleString('en-US'));
      assert.equal(await cellText('lag'), 'at the head');
      assert.match(await cellText('last-error'), /answered HTTP 422: not this one/);
      // `/status` tells the same.
      const status = (await fetchText(`${base}/status`)).json as {
        feed: {
          head: number;
          sinks: Array<{ name: string; position: number; lagPositions: number; deadLetters: number }>;
        };
      };
      assert.deepEqual(
        status.feed.sinks.map((s) => [s.name, s.position, s.lagPositions, s.deadLetters]),
        [['webhook', moved, 0, 1]],
      );
      assert.equal(status.feed.head, moved);
      await page.screenshot({ path: join(shots.path, 'status-page-sink.png'), fullPage: true });
      assert.deepEqual(consoleErrors, []);
    },
  );
});

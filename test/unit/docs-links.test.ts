import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { packageRoot } from '../../src/paths.js';

/** The documents a reader follows links through: the README, CONTRIBUTING.md and docs/. */
function documents(): string[] {
  const docs = readdirSync(join(packageRoot, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => join('docs', name));
  return ['README.md', 'CONTRIBUTING.md', ...docs.sort()];
}

/** Each line of a Markdown text outside fenced code blocks, with its number (inline code blanked). */
function proseLines(text: string): Array<{ line: string; number: number }> {
  const lines: Array<{ line: string; number: number }> = [];
  let fence: string | null = null;
  for (const [i, raw] of text.split('\n').entries()) {
    const opening = /^\s*(`{3,}|~{3,})/.exec(raw)?.[1];
    if (opening !== undefined && (fence === null || opening.startsWith(fence))) {
      fence = fence === null ? opening : null;
      continue;
    }
    if (fence === null) lines.push({ line: raw.replace(/(`+)[^`]*?\1/g, '``'), number: i + 1 });
  }
  return lines;
}

/**
 * The anchor GitHub gives a heading: its text without Markdown markup, lower-cased, every
 * character but letters, digits, `_`, `-` and spaces dropped, spaces turned into hyphens; a
 * repeated anchor gets `-1`, `-2`…
 */
function headingAnchors(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fence: string | null = null;
  for (const raw of text.split('\n')) {
    const opening = /^\s*(`{3,}|~{3,})/.exec(raw)?.[1];
    if (opening !== undefined && (fence === null || opening.startsWith(fence))) {
      fence = fence === null ? opening : null;
      continue;
    }
    const heading = fence === null ? /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(raw)?.[1] : undefined;
    if (heading === undefined) continue;
    const plain = heading
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/<[^>]+>/g, '')
      .replace(/[`*]/g, '');
    const slug = plain
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/**
 * Every relative link of `document` (its path in the repository; `text` its content) that leads
 * nowhere: a missing file, or an anchor no heading of the target has.
 */
function brokenLinks(document: string, text = readFileSync(join(packageRoot, document), 'utf8')): string[] {
  const broken: string[] = [];
  for (const { line, number } of proseLines(text)) {
    const targets = [
      ...[...line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]),
      ...[...line.matchAll(/^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/g)].map((m) => m[1]),
    ];
    for (const target of targets) {
      if (target === undefined || /^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:…
      const [pathPart = '', anchor] = target.split('#', 2);
      const where = `${document}:${number}: ${target}`;
      if (pathPart === '') {
        if (anchor !== undefined && !headingAnchors(text).has(anchor)) {
          broken.push(`${where} (no heading #${anchor} in ${document})`);
        }
        continue;
      }
      const path = join(dirname(join(packageRoot, document)), decodeURIComponent(pathPart));
      if (!existsSync(path)) {
        broken.push(`${where} (no file ${relative(packageRoot, path)})`);
      } else if (anchor !== undefined && statSync(path).isFile() && path.endsWith('.md')) {
        if (!headingAnchors(readFileSync(path, 'utf8')).has(anchor)) {
          broken.push(`${where} (no heading #${anchor} in ${relative(packageRoot, path)})`);
        }
      }
    }
  }
  return broken;
}

describe('links between the documents', () => {
  it('every relative link in the README, CONTRIBUTING.md and docs/ leads to a file and a heading', () => {
    const broken = documents().flatMap((document) => brokenLinks(document));
    assert.deepEqual(broken, [], `broken links:\n${broken.join('\n')}`);
  });

  it("follows GitHub's anchors: markup dropped, punctuation dropped, repeats numbered", () => {
    const anchors = headingAnchors(
      [
        '# Comparing two copies: `digest` and `verify --against`',
        "## The simulator's speed",
        '## Status freshness',
        '### Status freshness',
        '```sh',
        '# not a heading',
        '```',
      ].join('\n'),
    );
    assert.deepEqual(
      [...anchors],
      [
        'comparing-two-copies-digest-and-verify---against',
        'the-simulators-speed',
        'status-freshness',
        'status-freshness-1',
      ],
    );
  });

  it('finds a missing file and a missing heading, and reads no link in code', () => {
    const text = [
      '# A page',
      'See [the settings](configuration.md#settings), [this page](#a-page) and [the code](../src/config.ts).',
      'Broken: [gone](no-such-page.md), [no heading](operating.md#no-such-heading), [here](#nowhere).',
      'Not links: `[inline](inline.md)`, [outside](https://example.org/missing.md).',
      '```md',
      '[fenced](fenced.md)',
      '```',
    ].join('\n');
    assert.deepEqual(brokenLinks('docs/example.md', text), [
      'docs/example.md:3: no-such-page.md (no file docs/no-such-page.md)',
      'docs/example.md:3: operating.md#no-such-heading (no heading #no-such-heading in docs/operating.md)',
      'docs/example.md:3: #nowhere (no heading #nowhere in docs/example.md)',
    ]);
  });
});

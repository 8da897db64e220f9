import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { screenshotFolder } from '../helpers/screenshots.js';

describe('the screenshot folder of a browser test', () => {
  it('is removed after a passing run', () => {
    const folder = screenshotFolder('shots-', {});
    writeFileSync(join(folder.path, 'page.png'), 'png');
    const lines: string[] = [];
    assert.equal(
      folder.finish((line) => lines.push(line)),
      null,
    );
    assert.equal(existsSync(folder.path), false);
    assert.deepEqual(lines, []);
  });

  it('is kept after a failing run, its path printed', () => {
    const folder = screenshotFolder('shots-', {});
    writeFileSync(join(folder.path, 'page.png'), 'png');
    folder.failed();
    const lines: string[] = [];
    assert.equal(
      folder.finish((line) => lines.push(line)),
      folder.path,
    );
    assert.ok(existsSync(join(folder.path, 'page.png')));
    assert.deepEqual(lines, [`screenshots kept in ${folder.path}`]);
    rmSync(folder.path, { recursive: true });
  });

  it('is the folder TEST_SCREENSHOT_DIR names, created and kept', () => {
    const parent = mkdtempSync(join(tmpdir(), 'shots-parent-'));
    const named = join(parent, 'status-page');
    const folder = screenshotFolder('shots-', { TEST_SCREENSHOT_DIR: named });
    assert.equal(folder.path, named);
    writeFileSync(join(folder.path, 'page.png'), 'png');
    assert.equal(
      folder.finish(() => {}),
      named,
    );
    assert.ok(existsSync(join(named, 'page.png')));
    rmSync(parent, { recursive: true });
  });
});

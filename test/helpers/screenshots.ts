/**
 * Where a browser test saves its screenshots: the folder `TEST_SCREENSHOT_DIR` names (kept, for
 * CI to collect), else a temporary folder that a passing run removes and a failing run keeps,
 * saying where.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/** A test file's screenshot folder. */
export interface ScreenshotFolder {
  path: string;
  /** Marks the run failed: the folder is kept. */
  failed(): void;
  /** Removes the folder unless it is kept, else reports its path through `log`; returns the path kept. */
  finish(log?: (line: string) => void): string | null;
}

/** A folder for the screenshots of one test file, named with `prefix` when temporary. */
export function screenshotFolder(prefix: string, env: NodeJS.ProcessEnv = process.env): ScreenshotFolder {
  const named = env.TEST_SCREENSHOT_DIR;
  const path = named ? resolve(named) : mkdtempSync(join(tmpdir(), prefix));
  if (named) mkdirSync(path, { recursive: true });
  let failed = false;
  return {
    path,
    failed() {
      failed = true;
    },
    finish(log = (line) => console.error(line)) {
      if (!named && !failed) {
        rmSync(path, { recursive: true, force: true });
        return null;
      }
      log(`screenshots kept in ${path}`);
      return path;
    },
  };
}

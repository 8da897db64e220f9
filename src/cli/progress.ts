import type { PageEvent } from '../sync/walk/walk-types.js';
import { formatDuration } from './format.js';

/** Where the progress goes and how. */
export interface ProgressOptions {
  out: NodeJS.WritableStream;
  /** Redraw one bar in place (a terminal) instead of printing plain lines. */
  tty: boolean;
  /** Least time between two plain lines. Default 2000 ms. */
  plainEveryMs?: number;
  now?: () => number;
}

/** Shows a sync's progress: pages, records per second and ETA. */
export interface Progress {
  /** A page was committed. */
  page(event: PageEvent): void;
  /** Clears the bar (TTY) or prints a last line, before the summary. */
  done(): void;
}

const BAR_WIDTH = 24;

/**
 * A progress display fed with the engine's page events: on a terminal a bar redrawn in place,
 * otherwise a plain line every few seconds (logs stay readable when piped).
 */
export function createProgress(options: ProgressOptions): Progress {
  const now = options.now ?? Date.now;
  const plainEveryMs = options.plainEveryMs ?? 2000;
  const startedAt = now();
  let records = 0;
  let lastLineAt = Number.NEGATIVE_INFINITY;
  let last: PageEvent | null = null;
  let drawn = false;

  const line = (event: PageEvent): string => {
    const seconds = Math.max((now() - startedAt) / 1000, 0.001);
    const rate = Math.round(records / seconds);
    // A walk by key knows no page count (`totalPages` 0): its requests are counted, with no ETA,
    // under the stream's first mode: a backfill in lanes and the tail after it are one run.
    const counted = event.totalPages > 0;
    if (!counted) {
      const stream = byKey.get(event.key);
      const mode = stream?.mode ?? event.mode;
      const requests = stream?.requests ?? event.page;
      return `${event.key} ${mode} by key, request ${requests}  ${records} records  ${rate} rec/s`;
    }
    const left = event.mode === 'backfill' ? Math.max(event.totalPages - event.page, 0) : 0;
    const pagesPerSecond = pagesDone / seconds;
    const eta = event.mode === 'backfill' && pagesPerSecond > 0 ? formatDuration(left / pagesPerSecond) : '-';
    const total = event.mode === 'backfill' ? `/${event.totalPages}` : '';
    return `${event.key} ${event.mode} page ${event.page}${total}  ${records} records  ${rate} rec/s  ETA ${eta}`;
  };
  let pagesDone = 0;
  /** Per stream read by key: the mode its run began with, and the requests committed so far. */
  const byKey = new Map<string, { mode: PageEvent['mode']; requests: number }>();

  return {
    page(event) {
      records += event.records;
      pagesDone += event.pages;
      if (event.totalPages === 0) {
        const stream = byKey.get(event.key) ?? { mode: event.mode, requests: 0 };
        stream.requests += event.pages;
        byKey.set(event.key, stream);
      }
      last = event;
      const at = now();
      if (options.tty) {
        const share = event.totalPages > 0 ? Math.min(event.page / event.totalPages, 1) : 0;
        const filled = Math.round(share * BAR_WIDTH);
        const bar = `[${'#'.repeat(filled)}${'.'.repeat(BAR_WIDTH - filled)}]`;
        options.out.write(`\r\x1b[K${bar} ${line(event)}`);
        drawn = true;
      } else if (at - lastLineAt >= plainEveryMs) {
        lastLineAt = at;
        options.out.write(`${line(event)}\n`);
      }
    },
    done() {
      if (options.tty && drawn) options.out.write('\r\x1b[K');
      else if (!options.tty && last) options.out.write(`${line(last)}\n`);
    },
  };
}

import type { ServerResponse } from 'node:http';
import { answerDigest } from './digest-route.js';
import { checkFaults } from './faults.js';
import { json, type Reply } from './public-routes.js';
import type { Simulator } from './types.js';

/** What the control endpoints act on (the in-process API plus a few extras). */
export interface ControlTarget extends Simulator {
  arrivalState(): { running: boolean; perSecond: number };
  setArrivalRate(perSecond: number): void;
  resetStats(): void;
  details(): Record<string, unknown>;
  /** The ground truth as JSON lines (same content as `records()`). */
  recordLines(afterRawId: number | undefined): IterableIterator<string>;
}

/** Resolves when the response can take more data, or is gone. */
function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/**
 * Streams the ground truth as NDJSON, a line per record in rawId order, waiting for the socket
 * to drain so a million records never sit in memory at once.
 */
async function streamRecords(
  target: ControlTarget,
  res: ServerResponse,
  afterRawId: number | undefined,
): Promise<void> {
  res.writeHead(200, { 'content-type': 'application/x-ndjson' });
  let chunk = '';
  for (const line of target.recordLines(afterRawId)) {
    chunk += `${line}\n`;
    if (chunk.length > 64 * 1024) {
      const ok = res.write(chunk);
      chunk = '';
      if (!ok) await drained(res);
      if (res.destroyed) return;
    }
  }
  res.end(chunk);
}

function wholeNumber(value: string | null): number | undefined {
  return value !== null && /^\d{1,9}$/.test(value) ? Number(value) : undefined;
}

/**
 * Answers a `/_sim/…` request, at once or later (a promise of the answer, or of `undefined` when
 * it streamed the answer itself); `null` for an unknown control path.
 */
export function handleControl(input: {
  target: ControlTarget;
  method: string;
  path: string;
  params: URLSearchParams;
  body: unknown;
  res: ServerResponse;
}): Reply | Promise<Reply | undefined> | null {
  const { target, method, path, params, body } = input;
  const route = `${method} ${path}`;
  switch (route) {
    case 'GET /_sim/records': {
      const after = params.get('afterRawId');
      const afterRawId = after === null ? undefined : wholeNumber(after);
      if (after !== null && afterRawId === undefined) return json(400, { error: 'err_invalid_after_raw_id' });
      return streamRecords(target, input.res, afterRawId).then(() => undefined);
    }
    case 'GET /_sim/digest':
      return answerDigest((after) => target.recordLines(after), params);
    case 'POST /_sim/records': {
      const count = wholeNumber(params.get('count') ?? '1');
      if (count === undefined || count < 1 || count > 10_000_000)
        return json(400, { error: 'err_invalid_count' });
      const headRawId = target.addRecords(count);
      return json(200, { added: count, headRawId, records: target.count() });
    }
    case 'POST /_sim/arrivals/pause':
      target.pauseArrivals();
      return json(200, target.arrivalState());
    case 'POST /_sim/arrivals/resume':
      target.resumeArrivals();
      return json(200, target.arrivalState());
    case 'GET /_sim/arrivals':
      return json(200, target.arrivalState());
    case 'POST /_sim/arrivals': {
      const rate = Number(params.get('perSecond'));
      if (!Number.isFinite(rate) || rate < 0 || params.get('perSecond') === null) {
        return json(400, { error: 'err_invalid_per_second' });
      }
      target.setArrivalRate(rate);
      return json(200, target.arrivalState());
    }
    case 'POST /_sim/settle':
      target.settleAll();
      return json(200, { settled: true, headRawId: target.headRawId() });
    case 'GET /_sim/faults':
      return json(200, target.faults());
    case 'POST /_sim/faults': {
      try {
        return json(200, target.setFaults(checkFaults(body)));
      } catch (error) {
        return json(400, { error: 'err_invalid_faults', message: (error as Error).message });
      }
    }
    case 'GET /_sim/stats':
      return json(200, { requests: target.stats(), ...target.listRequests(), ...target.details() });
    case 'POST /_sim/stats/reset':
      target.resetStats();
      return json(200, { requests: target.stats(), ...target.listRequests() });
    default:
      return null;
  }
}

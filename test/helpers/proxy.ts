/** Helpers for tests that put a scripted server (test/helpers/http-server.ts) in front of the simulator. */
import type { RecordedRequest, ScriptedReply } from './http-server.js';

/** Answers `request` with what the server at `target` answers it. */
export async function forward(target: string, request: RecordedRequest): Promise<ScriptedReply> {
  const answer = await fetch(target + request.url);
  return {
    status: answer.status,
    headers: { 'content-type': answer.headers.get('content-type') ?? 'application/json' },
    body: await answer.text(),
  };
}

/** The most timestamps (ms) within any one second. */
export function busiestSecond(times: number[]): number {
  const sorted = [...times].sort((a, b) => a - b);
  let busiest = 0;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while ((sorted[j] ?? Infinity) <= (sorted[i] ?? 0) - 1000) j++;
    busiest = Math.max(busiest, i - j + 1);
  }
  return busiest;
}

/** Types of test/preflight.mjs, which test/run.mjs runs without TypeScript. */

/** A server that must answer, or a program or file that must be there. */
export type TestNeed =
  | {
      kind: 'server';
      what: string;
      setting: string;
      host?: string;
      port?: number;
      socket?: string;
      invalid?: string;
    }
  | { kind: 'program'; what: string; found: () => boolean; hint: string };

export const CHROMIUM: string;
export const DEFAULT_DATABASE_URL: string;
export const DEFAULT_REDIS_URL: string;
export const DEFAULT_NATS_URL: string;
export function testNeeds(files: string[], options: { root: string; env?: NodeJS.ProcessEnv }): TestNeed[];
export function chromiumNeed(path: string): TestNeed;
export function postgresServer(url: string, setting?: string): TestNeed;
export function redisServer(url: string, setting?: string): TestNeed;
export function natsServer(url: string, setting?: string): TestNeed;
export function preflight(needs: TestNeed[], options?: { timeoutMs?: number }): Promise<string | null>;

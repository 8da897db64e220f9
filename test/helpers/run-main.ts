import { PassThrough } from 'node:stream';
import { main } from '../../src/cli/main.js';

/** Runs the command line in this process with `env`, and returns its exit code and everything it printed. */
export async function runMain(
  argv: string[],
  env: Record<string, string>,
): Promise<{ code: number; out: string; err: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c: Buffer) => {
    out += c.toString();
  });
  stderr.on('data', (c: Buffer) => {
    err += c.toString();
  });
  const code = await main(argv, { env, stdout, stderr, signal: new AbortController().signal });
  return { code, out, err };
}

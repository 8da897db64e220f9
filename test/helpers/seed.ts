/**
 * Seeded randomness for tests: every random choice of a test comes from one seed, printed with
 * any failure, so a failing run can be replayed with `TEST_SEED=<seed>`.
 */
import { randomInt } from 'node:crypto';
import { createRng, type Rng } from '../../src/simulator/random.js';

export type { Rng } from '../../src/simulator/random.js';
export { createRng };

/** `TEST_SEED` when set (to replay a failure), else a fresh seed. */
export function testSeed(): number {
  const given = process.env.TEST_SEED;
  if (given === undefined || given === '') return randomInt(1, 2 ** 31);
  const seed = Number(given);
  if (!Number.isSafeInteger(seed)) throw new Error(`TEST_SEED must be an integer, got '${given}'`);
  return seed;
}

/** Runs `body` with a random source made from {@link testSeed}; a failure names the seed. */
export async function withSeed<T>(body: (rng: Rng, seed: number) => Promise<T> | T): Promise<T> {
  const seed = testSeed();
  try {
    return await body(createRng(seed), seed);
  } catch (error) {
    throw withSeedNote(error, seed);
  }
}

/** `error` with `[seed N: rerun with TEST_SEED=N]` in front of its message, where reporters show it. */
export function withSeedNote(error: unknown, seed: number): unknown {
  const note = `[seed ${seed}: rerun with TEST_SEED=${seed}]`;
  if (!(error instanceof Error)) return new Error(`${note} ${String(error)}`, { cause: error });
  if (!error.message.startsWith(note)) {
    const message = error.message;
    error.message = `${note} ${message}`;
    const stack = error.stack ?? '';
    error.stack =
      message !== '' && stack.includes(message) ? stack.replace(message, error.message) : `${note} ${stack}`;
  }
  return error;
}

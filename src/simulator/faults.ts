import { createRng, type Rng } from './random.js';
import type { SimulatorFaults } from './types.js';

/** No faults at all. */
export const NO_FAULTS: SimulatorFaults = {
  latencyMs: 0,
  latencyJitterMs: 0,
  errorRate: 0,
  rateLimitRate: 0,
  retryAfterSeconds: 1,
  hangRate: 0,
  truncateRate: 0,
  malformedRate: 0,
  tamperedRate: 0,
  requestBudgetPerSecond: 0,
};

const SHARES = [
  'errorRate',
  'rateLimitRate',
  'hangRate',
  'truncateRate',
  'malformedRate',
  'tamperedRate',
] as const;

/** The faults that change what a record's text says, decided per rawId. */
export type RecordFaults = Pick<SimulatorFaults, 'malformedRate' | 'tamperedRate'>;

/**
 * Checks a partial fault setting (from a flag, the control endpoint or code). Returns it typed,
 * or throws an Error whose message names the bad field.
 */
export function checkFaults(input: unknown): Partial<SimulatorFaults> {
  if (!input || typeof input !== 'object' || Array.isArray(input))
    throw new Error('faults must be a JSON object');
  const out: Partial<SimulatorFaults> = {};
  for (const [key, value] of Object.entries(input)) {
    if (!(key in NO_FAULTS)) throw new Error(`unknown fault '${key}'`);
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
      throw new Error(`fault '${key}' must be a number >= 0`);
    }
    if ((SHARES as readonly string[]).includes(key) && value > 1)
      throw new Error(`fault '${key}' must be between 0 and 1`);
    out[key as keyof SimulatorFaults] = value;
  }
  return out;
}

/** What to do to one request. */
export type FaultDecision =
  | { kind: 'serve'; delayMs: number; truncate: boolean }
  | { kind: 'hang' }
  | { kind: 'error'; status: 500 | 503; delayMs: number }
  | { kind: 'rate_limited'; retryAfterSeconds: number; reason: 'budget' | 'random' };

/** Decides, request by request, which fault (if any) a public request meets. */
export class FaultInjector {
  private current: SimulatorFaults;
  private readonly rng: Rng;
  private readonly windows = new Map<string, { start: number; count: number }>();

  constructor(seed: number, initial: Partial<SimulatorFaults> = {}) {
    this.current = { ...NO_FAULTS, ...checkFaults(initial) };
    this.rng = createRng(seed, 0xfa17);
  }

  get faults(): SimulatorFaults {
    return { ...this.current };
  }

  update(partial: Partial<SimulatorFaults>): SimulatorFaults {
    this.current = { ...this.current, ...checkFaults(partial) };
    return this.faults;
  }

  decide(client: string, now: number): FaultDecision {
    const f = this.current;
    if (f.requestBudgetPerSecond > 0) {
      let window = this.windows.get(client);
      if (!window || now - window.start >= 1000) {
        window = { start: now, count: 0 };
        this.windows.set(client, window);
        if (this.windows.size > 10_000) this.windows.clear();
      }
      window.count++;
      if (window.count > f.requestBudgetPerSecond) {
        return {
          kind: 'rate_limited',
          retryAfterSeconds: Math.max(1, Math.ceil((window.start + 1000 - now) / 1000)),
          reason: 'budget',
        };
      }
    }
    const delayMs = f.latencyMs + (f.latencyJitterMs > 0 ? this.rng.next() * f.latencyJitterMs : 0);
    if (f.hangRate > 0 && this.rng.chance(f.hangRate)) return { kind: 'hang' };
    if (f.rateLimitRate > 0 && this.rng.chance(f.rateLimitRate)) {
      return { kind: 'rate_limited', retryAfterSeconds: f.retryAfterSeconds, reason: 'random' };
    }
    if (f.errorRate > 0 && this.rng.chance(f.errorRate)) {
      return { kind: 'error', status: this.rng.chance(0.5) ? 500 : 503, delayMs };
    }
    return { kind: 'serve', delayMs, truncate: f.truncateRate > 0 && this.rng.chance(f.truncateRate) };
  }
}

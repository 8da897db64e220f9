import type { SimulatedLedger } from './ledger.js';

/** New records arriving at the head at a steady rate, and records moving on through their statuses. */
export interface Arrivals {
  /** Ticks every `tickMs` from now on: the server started. */
  start(tickMs: number): void;
  stop(): void;
  pause(): void;
  resume(): void;
  setRate(perSecond: number): void;
  state(): { running: boolean; perSecond: number };
}

/** Creates the arrivals of a ledger: each tick adds the records the rate owes since the last. */
export function createArrivals(input: {
  ledger: SimulatedLedger;
  now: () => number;
  perSecond: number;
}): Arrivals {
  const { ledger, now } = input;
  let perSecond = input.perSecond;
  let running = true;
  /** Fractions of a record owed by the rate, carried to the next tick. */
  let owed = 0;
  let lastTick = now();
  let timer: NodeJS.Timeout | undefined;

  const tick = (): void => {
    const t = now();
    if (running && perSecond > 0) {
      owed += ((t - lastTick) * perSecond) / 1000;
      const due = Math.floor(owed);
      if (due > 0) {
        owed -= due;
        ledger.arrive(due, t);
      }
    }
    lastTick = t;
    ledger.advance(t);
  };

  return {
    start(tickMs) {
      lastTick = now();
      timer = setInterval(tick, tickMs);
      timer.unref();
    },
    stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
    },
    pause() {
      running = false;
    },
    resume() {
      if (!running) lastTick = now();
      running = true;
    },
    setRate(rate) {
      perSecond = rate;
    },
    state: () => ({ running, perSecond }),
  };
}

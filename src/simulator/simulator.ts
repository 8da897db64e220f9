import { PAGING_MODES } from '../service-query/key-query.js';
import { createArrivals } from './arrivals.js';
import type { ControlTarget } from './control-routes.js';
import { FaultInjector } from './faults.js';
import { groundTruthOf } from './ground-truth.js';
import { createHttpListener } from './http-listener.js';
import { SimulatedLedger } from './ledger.js';
import { json, type PublicRouteContext } from './public-routes.js';
import { seedNumber } from './random.js';
import { createRequestHandler } from './request-handler.js';
import { createRequestStats } from './request-stats.js';
import { checkSubmission, isRefusal } from './submit-tx.js';
import type { Simulator, SimulatorFaults, SimulatorOptions } from './types.js';

const TICK_MS = 50;
const DEFAULT_HISTORY_END_MS = Date.UTC(2026, 0, 1);

function checkOptions(options: SimulatorOptions): void {
  const nonNegative = [
    'records',
    'arrivalsPerSecond',
    'packageDelayMs',
    'burnTargetDelayMs',
    'jsonCacheSize',
    'lateMs',
  ] as const;
  for (const key of nonNegative) {
    const value = options[key];
    if (value !== undefined && (!Number.isFinite(value) || value < 0))
      throw new RangeError(`${key} must be a number >= 0`);
  }
  if (options.records !== undefined && !Number.isInteger(options.records))
    throw new RangeError('records must be whole');
  const hole = options.holeRate;
  if (hole !== undefined && !(hole >= 0 && hole < 1)) throw new RangeError('holeRate must be in [0, 1)');
  for (const key of ['maxCount', 'refuseCountAbove'] as const) {
    const value = options[key];
    if (value !== undefined && !(Number.isSafeInteger(value) && value >= 0))
      throw new RangeError(`${key} must be a whole number >= 0`);
  }
  if (options.paging !== undefined && !PAGING_MODES.includes(options.paging))
    throw new RangeError(`paging must be one of ${PAGING_MODES.join(', ')}`);
  const late = options.lateRate;
  if (late !== undefined && !(late >= 0 && late <= 1)) throw new RangeError('lateRate must be in [0, 1]');
}

/**
 * Creates the reference ledger server: a seeded data set held in memory, live arrivals, status
 * changes, faults on demand, and the `/_sim/` control endpoints. Nothing listens until
 * {@link Simulator.listen}.
 */
export function createSimulator(options: SimulatorOptions = {}): Simulator {
  checkOptions(options);
  const now = options.now ?? Date.now;
  const seed = seedNumber(options.seed ?? 1);
  const ledger = new SimulatedLedger({
    seed,
    records: options.records ?? 1000,
    holeRate: options.holeRate ?? 0.01,
    packageDelayMs: options.packageDelayMs ?? 2000,
    burnTargetDelayMs: options.burnTargetDelayMs ?? 5000,
    jsonCacheSize: options.jsonCacheSize ?? 300_000,
    historyEndMs: options.historyEndMs ?? DEFAULT_HISTORY_END_MS,
    late: { rate: options.lateRate ?? 0, delayMs: options.lateMs ?? 1500 },
  });
  // Without a packaging delay, records are packaged as soon as they are added.
  const settleAtOnce = (options.packageDelayMs ?? 2000) === 0;
  const injector = new FaultInjector(seed, options.faults);
  const arrivals = createArrivals({ ledger, now, perSecond: options.arrivalsPerSecond ?? 0 });
  const stats = createRequestStats();
  const listener = createHttpListener();
  const truth = groundTruthOf(ledger, injector);
  const lastNonce = new Map<string, number>();
  const routes: PublicRouteContext = {
    ledger,
    paging: options.paging ?? 'both',
    keyLimits: { maxCount: options.maxCount ?? 0, refuseCountAbove: options.refuseCountAbove ?? 0 },
    recordFaults: () => injector.faults,
    submit: (body) => {
      const result = checkSubmission(ledger, body, lastNonce, now());
      if (isRefusal(result)) return json(result.status, { error: result.error });
      ledger.appendSubmitted(result);
      if (settleAtOnce) ledger.advance(now());
      return json(200, { status: 'ok' });
    },
  };

  const control: ControlTarget = {
    async listen(at = {}) {
      const { hanging } = listener;
      const handle = createRequestHandler({ ledger, injector, routes, control, stats, hanging, now });
      const address = await listener.listen(handle, at);
      arrivals.start(TICK_MS);
      return address;
    },
    async close() {
      arrivals.stop();
      await listener.close();
    },
    addRecords(n) {
      const head = ledger.arrive(n, now());
      if (settleAtOnce) ledger.advance(now());
      return head;
    },
    pauseArrivals: () => arrivals.pause(),
    resumeArrivals: () => arrivals.resume(),
    settleAll() {
      ledger.advance(now(), true);
    },
    setFaults: (partial: Partial<SimulatorFaults>) => injector.update(partial),
    faults: () => injector.faults,
    records(opts) {
      ledger.reveal(now());
      return truth.records(opts);
    },
    recordLines(afterRawId) {
      ledger.reveal(now());
      return truth.recordLines(afterRawId);
    },
    count() {
      ledger.reveal(now());
      return ledger.visibleCount();
    },
    headRawId() {
      ledger.reveal(now());
      return ledger.headRawId();
    },
    stats: () => stats.snapshot(),
    listRequests: () => stats.lists(),
    arrivalState: () => arrivals.state(),
    setArrivalRate: (rate) => arrivals.setRate(rate),
    resetStats: () => stats.reset(),
    details: () => ({
      records: ledger.visibleCount(),
      hiddenLate: ledger.hiddenCount(),
      headRawId: ledger.headRawId(),
      pending: ledger.pendingCount(),
      cachedRecords: ledger.cacheSize(),
      accounts: ledger.table.accounts.length,
      arrivals: arrivals.state(),
      memory: process.memoryUsage(),
      cpuUsage: process.cpuUsage(),
    }),
  };
  return control;
}

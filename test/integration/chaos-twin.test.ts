/**
 * A second copy of the chaos test, with a seed of its own and a service that speaks only the key
 * dialect: the runner starts it beside chaos.test.ts, so two clusters share the machine, as the
 * crashes that once lost records needed.
 */
import { describeChaos } from './chaos-scenario.js';

describeChaos('chaos by key, a second cluster at once', 'key');

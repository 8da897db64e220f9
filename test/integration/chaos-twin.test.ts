/**
 * A second copy of the chaos test, with a seed of its own: the runner starts it beside
 * chaos.test.ts, so two clusters share the machine, as the crashes that once lost records needed.
 */
import { describeChaos } from './chaos-scenario.js';

describeChaos('chaos, a second cluster at once');

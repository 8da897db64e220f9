/**
 * Chaos: two `worker` processes and a `sync` run from cron keep a growing, faulty service
 * mirrored while PostgreSQL crashes and restarts, Redis restarts empty, and workers and the sync
 * are killed outright (see chaos-scenario.ts). chaos-twin.test.ts runs a second copy at once.
 */
import { describeChaos } from './chaos-scenario.js';

describeChaos();

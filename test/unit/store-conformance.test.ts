import { MemoryStore } from '../helpers/memory-store.js';
import { storeConformance } from '../helpers/store-conformance.js';

storeConformance('in-memory store', async (now) => {
  const store = new MemoryStore({ now });
  return { sync: store, backfill: store };
});

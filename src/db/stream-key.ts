import type { StreamSpec } from '../sync/ports/sync-store.js';

export { streamKey } from '../domain/stream-key.js';

/** The spec with only its defined, non-empty fields, as stored beside the stream's key. */
export function normaliseSpec(spec: StreamSpec): StreamSpec {
  const out: StreamSpec = {};
  if (spec.account !== undefined) out.account = spec.account;
  for (const name of ['action', 'tokenTag', 'withoutAction'] as const) {
    const value = spec[name];
    if (value !== undefined && value !== '') out[name] = value;
  }
  return out;
}

import type { LookupSpelling } from '../config.js';
import { ConfigError } from '../errors.js';

/** The seven helper endpoints of the Tools group. */
export const TOOL_NAMES = [
  'smartAccountAuth',
  'getLedgerTxWithoutSig',
  'getLedgerTxMessage',
  'getBundleData',
  'genLedgerId',
  'hashMessage',
  'verifyMessage',
] as const;
export type ToolName = (typeof TOOL_NAMES)[number];

/**
 * Every endpoint's default path template: the service's own spelling. `{name}` marks a
 * path parameter. `txsByKey` is the key-paging list (`/txs?cursor=…&order=…&count=…`, and
 * `/txs?address=<account>` for one account); `txsByKeyAccount` is the older clients' spelling of
 * an account's key-paging list.
 */
export const DEFAULT_PATHS = {
  info: '/info',
  balances: '/balances/{account}',
  balance: '/balance/{tag}/{account}',
  fees: '/fees',
  fee: '/fee/{tag}',
  txs: '/txs',
  txsByAccount: '/txsByAccount/{account}',
  txsByHash: '/txsByHash/{ledgerHash}',
  mintedTxByChainTxHash: '/mintedTxByChainTxHash/{chainTxHash}',
  submitTx: '/tx',
  txsByKey: '/txs',
  txsByKeyAccount: '/txs/{account}',
  smartAccountAuth: '/smartAccountAuth',
  getLedgerTxWithoutSig: '/getLedgerTxWithoutSig',
  getLedgerTxMessage: '/getLedgerTxMessage',
  getBundleData: '/getBundleData',
  genLedgerId: '/genLedgerId',
  hashMessage: '/hashMessage',
  verifyMessage: '/verifyMessage',
} as const satisfies Record<string, string>;

/** The name of an endpoint, as used in `paths` and `LEDGER_PATHS`. */
export type EndpointName = keyof typeof DEFAULT_PATHS;

/** Path templates by endpoint name: the defaults with any overrides applied. */
export type PathTemplates = Record<EndpointName, string>;

/** The single look-ups as deployments spell them (`LEDGER_LOOKUPS=deployed`). */
export const DEPLOYED_LOOKUP_PATHS = {
  txsByHash: '/tx/{ledgerHash}',
  mintedTxByChainTxHash: '/minted/{chainTxHash}',
} as const satisfies Partial<PathTemplates>;

/** The two spellings of the account list the service is known to serve. */
export const ACCOUNT_PATH_SHAPES = ['/txsByAccount/{account}', '/txs/{account}'] as const;

const PLACEHOLDER = /\{([A-Za-z]+)\}/g;

/**
 * Merges path overrides into the defaults (with the look-ups spelled as `lookups` says), checking
 * each: a known endpoint name, a template starting with `/`, and exactly the parameters the
 * default has. Throws {@link ConfigError} naming `setting` (e.g. `LEDGER_PATHS`).
 */
export function resolvePaths(
  overrides: Record<string, string> | undefined,
  setting = 'paths',
  lookups: LookupSpelling = 'interface',
): PathTemplates {
  const paths: PathTemplates = {
    ...DEFAULT_PATHS,
    ...(lookups === 'deployed' ? DEPLOYED_LOOKUP_PATHS : {}),
  };
  for (const [name, template] of Object.entries(overrides ?? {})) {
    if (!Object.hasOwn(DEFAULT_PATHS, name)) {
      throw new ConfigError(
        setting,
        `unknown endpoint '${name}' (known: ${Object.keys(DEFAULT_PATHS).join(', ')})`,
      );
    }
    const endpoint = name as EndpointName;
    if (typeof template !== 'string' || !template.startsWith('/')) {
      throw new ConfigError(setting, `path of '${name}' must start with '/'`);
    }
    if (/[?#]/.test(template)) throw new ConfigError(setting, `path of '${name}' must not hold '?' or '#'`);
    const want = placeholders(DEFAULT_PATHS[endpoint]).sort().join(',');
    const got = placeholders(template).sort().join(',');
    if (want !== got) {
      throw new ConfigError(
        setting,
        `path of '${name}' must use exactly the parameters ${want ? `{${want.split(',').join('}, {')}}` : '(none)'} (got '${template}')`,
      );
    }
    paths[endpoint] = template;
  }
  return paths;
}

/** The account-list templates to try, the configured one first. */
export function accountPathCandidates(configured: string): string[] {
  return [configured, ...ACCOUNT_PATH_SHAPES.filter((shape) => shape !== configured)];
}

/**
 * Fills a template's `{name}` parameters, URL-encoding each value as one path segment (account
 * ids hold `,`; hashes and tags may hold anything). An empty or missing value is a caller bug.
 */
export function fillPath(template: string, params: Record<string, string> = {}): string {
  return template.replace(PLACEHOLDER, (_, name: string) => {
    const value = params[name];
    if (typeof value !== 'string' || value === '') {
      throw new TypeError(`${name} must be a non-empty string (got ${JSON.stringify(value)})`);
    }
    return encodeURIComponent(value);
  });
}

/**
 * A query string (with its leading `?`, or `''` when empty) from the defined values, each
 * URL-encoded. Numbers must be safe integers.
 */
export function queryString(params: Record<string, string | number | undefined>): string {
  let out = '';
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined) continue;
    if (typeof value === 'number' && !Number.isSafeInteger(value)) {
      throw new TypeError(`${key} must be a whole number (got ${value})`);
    }
    out += `${out === '' ? '?' : '&'}${encodeURIComponent(key)}=${encodeURIComponent(String(value))}`;
  }
  return out;
}

function placeholders(template: string): string[] {
  return [...template.matchAll(PLACEHOLDER)].map((match) => match[1] ?? '');
}

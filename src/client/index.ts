/** The typed client of the ledger service. */

export {
  ACCOUNT_PATH_SHAPES,
  DEFAULT_PATHS,
  DEPLOYED_LOOKUP_PATHS,
  type EndpointName,
  resolvePaths,
  TOOL_NAMES,
  type ToolName,
} from './api-paths.js';
export * from './api-types.js';
export type { CallOptions, ToolCall, ToolCallOptions } from './call-options.js';
export { isNotFound } from './http.js';
export type { ClientStats } from './http-types.js';
export { MIN_KEY_COUNT } from './key-lists.js';
export { createLedgerClient, type LedgerClient, type TxsAfterQuery } from './ledger-client.js';
export { clientOptionsFromConfig, type LedgerClientOptions } from './options.js';
export { parseListDialect, parseSingleTx, parseTxKeyPage, parseTxPage } from './page.js';
export { parseTxRecord, tryParseTxRecord } from './record.js';
export { createRequestBudget, type RequestBudget, type RequestBudgetOptions } from './request-budget.js';
export { parseRetryAfter, retryDelayMs } from './retry-after.js';
export type { AbortLike } from './stop-token.js';

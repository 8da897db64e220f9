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
export { type ClientStats, isNotFound } from './http.js';
export { MIN_KEY_COUNT } from './key-lists.js';
export {
  type CallOptions,
  createLedgerClient,
  type LedgerClient,
  type ToolCall,
  type ToolCallOptions,
  type TxsAfterQuery,
} from './ledger-client.js';
export { clientOptionsFromConfig, type LedgerClientOptions } from './options.js';
export { parseListDialect, parseSingleTx, parseTxKeyPage, parseTxPage } from './page.js';
export { parseTxRecord, tryParseTxRecord } from './record.js';
export { createRequestBudget, type RequestBudget, type RequestBudgetOptions } from './request-budget.js';
export { parseRetryAfter, retryDelayMs } from './retry-after.js';
export type { AbortLike } from './stop-token.js';

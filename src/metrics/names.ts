/** The prefix of every metric ledger-indexer exports, the process's own included. */
export const METRIC_PREFIX = 'ledger_indexer_';

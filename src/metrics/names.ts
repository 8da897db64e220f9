/** The prefix of every metric ledger-indexer exports, the process's own included. */
export const METRIC_PREFIX = 'ledger_indexer_';

/** The label of writes made by re-reads, which belong to no stream. */
export const REREAD_STREAM = 'rereads';

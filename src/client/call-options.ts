/** The per-call options of the client's methods, and the shape of a Tools call. */

/** Per-call options of every client method. */
export interface CallOptions {
  /** Aborts the call, its waits and its retries; the call rejects with the signal's reason. */
  signal?: AbortSignal | undefined;
}

/** Per-call options of a Tools call. */
export interface ToolCallOptions extends CallOptions {
  /** Overrides the tool's configured method: GET sends `params` as a query, POST as a JSON body. */
  method?: 'GET' | 'POST' | undefined;
}

/** A Tools endpoint: generic, since its parameters and answer are not documented. */
export type ToolCall = (params?: Record<string, unknown>, options?: ToolCallOptions) => Promise<unknown>;

/** An answer ready to send. */
export interface Reply {
  status: number;
  body: string | Buffer;
  contentType?: string;
  headers?: Record<string, string>;
}

export const json = (status: number, value: unknown): Reply => ({ status, body: JSON.stringify(value) });
export const notFound = (): Reply => json(404, { error: 'err_not_found' });

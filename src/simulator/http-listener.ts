import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The simulator's HTTP server: listening, and closing with the answers it holds back. */
export interface HttpListener {
  /** Answers the `hang` fault holds open; destroyed on close. */
  readonly hanging: Set<ServerResponse>;
  listen(
    handle: (req: IncomingMessage, res: ServerResponse) => void,
    at: { host?: string; port?: number },
  ): Promise<{ url: string }>;
  close(): Promise<void>;
}

export function createHttpListener(): HttpListener {
  const hanging = new Set<ServerResponse>();
  let server: Server | undefined;
  return {
    hanging,
    async listen(handle, { host = '127.0.0.1', port = 0 }) {
      if (server) throw new Error('the simulator is already listening');
      const s = createServer({ keepAlive: true }, handle);
      s.keepAliveTimeout = 30_000;
      server = s;
      await new Promise<void>((resolve, reject) => {
        s.once('error', reject);
        s.listen(port, host, () => {
          s.off('error', reject);
          resolve();
        });
      });
      const address = s.address() as AddressInfo;
      const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      return { url: `http://${shown}:${address.port}` };
    },
    async close() {
      for (const res of hanging) res.destroy();
      hanging.clear();
      const s = server;
      server = undefined;
      if (!s) return;
      await new Promise<void>((resolve) => {
        s.close(() => resolve());
        s.closeAllConnections();
      });
    },
  };
}

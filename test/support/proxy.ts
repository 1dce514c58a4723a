/**
 * A TCP proxy on 127.0.0.1 whose connections a test can cut, to play a network failure
 * between a client and the server.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';

export interface CuttableProxy {
  port: number;
  /** Destroys every open connection (new ones are still accepted). */
  cut(): void;
  close(): Promise<void>;
}

export async function startProxy(targetPort: number): Promise<CuttableProxy> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(targetPort, '127.0.0.1');
    sockets.add(client);
    sockets.add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const cut = () => {
    for (const s of sockets) s.destroy();
    sockets.clear();
  };
  return {
    port: typeof address === 'object' && address ? address.port : 0,
    cut,
    async close() {
      cut();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

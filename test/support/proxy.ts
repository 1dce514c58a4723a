/**
 * A TCP proxy on 127.0.0.1 whose connections a test can cut, to play a network failure
 * between a client and the server.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';

export interface CuttableProxy {
  port: number;
  /** Destroys every open connection (new ones are still accepted). */
  cut(): void;
  /**
   * Silently drops everything on the open connections without closing them: a half-open
   * connection, as after a laptop sleeps or a router reboots. New connections work.
   */
  freeze(): void;
  /** Refuse (close at once) new connections until `accept(true)`. */
  accept(yes: boolean): void;
  close(): Promise<void>;
}

export async function startProxy(targetPort: number): Promise<CuttableProxy> {
  const sockets = new Set<Socket>();
  const pairs: Array<[Socket, Socket]> = [];
  let accepting = true;
  const server: Server = createServer((client) => {
    if (!accepting) {
      client.destroy();
      return;
    }
    const upstream = connect(targetPort, '127.0.0.1');
    pairs.push([client, upstream]);
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
    pairs.length = 0;
  };
  const freeze = () => {
    for (const [client, upstream] of pairs.splice(0)) {
      client.unpipe(upstream);
      upstream.unpipe(client);
      // Keep reading so nothing pushes back; drop what arrives.
      client.removeAllListeners('data');
      upstream.removeAllListeners('data');
      client.on('data', () => undefined);
      upstream.on('data', () => undefined);
    }
  };
  return {
    port: typeof address === 'object' && address ? address.port : 0,
    cut,
    freeze,
    accept: (yes: boolean) => {
      accepting = yes;
    },
    async close() {
      cut();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

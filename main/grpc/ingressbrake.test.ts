import { once } from 'node:events';
import { connect, createServer, type ClientHttp2Session, type Http2Session } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../client/api/errors.js';
import type { Identity } from '../../client/api/local.js';
import { FakeClock } from '../../client/util/clock.js';
import { createLogger } from '../logging.js';
import { BRAKE_BURST, IngressBrake } from './ingressbrake.js';

const user: Identity = { name: 'flooder', role: 'admin' };
const refusal = () => new ApiError('TooManyRequests', 'busy', { retryAfterSeconds: 2 });

describe('IngressBrake', () => {
  const closers: Array<() => void> = [];
  afterEach(() => {
    for (const close of closers.splice(0)) close();
  });

  /** A real HTTP/2 connection over loopback: the server's session and the client's. */
  async function connection(): Promise<{ server: Http2Session; client: ClientHttp2Session }> {
    const h2 = createServer();
    h2.listen(0, '127.0.0.1');
    await once(h2, 'listening');
    const accepted = once(h2, 'session') as Promise<[Http2Session]>;
    const client = connect(`http://127.0.0.1:${(h2.address() as AddressInfo).port}`);
    const [server] = await accepted;
    await once(client, 'remoteSettings');
    closers.push(() => {
      client.destroy();
      h2.close();
    });
    return { server, client };
  }

  async function refuseBurst(brake: IngressBrake, session: Http2Session): Promise<void> {
    for (let i = 0; i < BRAKE_BURST; i++)
      await brake.watch(Promise.reject(refusal()), user, () => session).catch(() => undefined);
  }

  it('gives a braked connection its own stream limit back, even when braked again before the client acknowledged it', async () => {
    const clock = new FakeClock();
    const brake = new IngressBrake(clock, createLogger({ level: 'silent' }));
    const { server, client } = await connection();
    const limit = server.localSettings.maxConcurrentStreams;
    expect(limit).toBeGreaterThan(0);

    await refuseBurst(brake, server);
    expect(brake.braked).toBe(1);
    await expect.poll(() => server.localSettings.maxConcurrentStreams, { interval: 10 }).toBe(0);
    expect(client.remoteSettings.maxConcurrentStreams).toBe(0);

    // The brake comes off; answers to requests sent before it still arrive as refusals, and
    // brake the connection again before the client has acknowledged its restored limit.
    clock.advance(2000);
    expect(brake.braked).toBe(0);
    await refuseBurst(brake, server);
    expect(brake.braked).toBe(1);

    clock.advance(2000);
    expect(brake.braked).toBe(0);
    await expect.poll(() => client.remoteSettings.maxConcurrentStreams, { interval: 10 }).toBe(limit);
  });

  it('never brakes an agent: its heartbeats share the connection', async () => {
    const brake = new IngressBrake(new FakeClock(), createLogger({ level: 'silent' }));
    const { server } = await connection();
    const node: Identity = { name: 'system:node:pi-1', role: 'node', nodeName: 'pi-1' };
    for (let i = 0; i < BRAKE_BURST * 2; i++)
      await brake.watch(Promise.reject(refusal()), node, () => server).catch(() => undefined);
    expect(brake.braked).toBe(0);
  });
});

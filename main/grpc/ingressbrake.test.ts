import { once } from 'node:events';
import {
  connect,
  createServer,
  type ClientHttp2Session,
  type ClientHttp2Stream,
  type Http2Session,
} from 'node:http2';
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

  /** A request's answer: its status and body, or how its stream was reset. */
  function answerOf(req: ClientHttp2Stream): Promise<{ status?: number; body: string; rstCode: number }> {
    return new Promise((resolve) => {
      let status: number | undefined;
      let body = '';
      req.on('response', (headers) => (status = Number(headers[':status'])));
      req.setEncoding('utf8').on('data', (d: string) => (body += d));
      req.on('error', () => undefined);
      req.on('close', () => resolve({ status, body, rstCode: req.rstCode ?? 0 }));
    });
  }

  /** Resolves once the server has read everything the client sent before the ping. */
  function pingRoundTrip(client: ClientHttp2Session): Promise<void> {
    return new Promise((resolve, reject) => client.ping((err) => (err ? reject(err) : resolve())));
  }

  async function refuseBurst(brake: IngressBrake, session: Http2Session): Promise<void> {
    for (let i = 0; i < BRAKE_BURST; i++)
      await brake.watch(Promise.reject(refusal()), user, () => session).catch(() => undefined);
  }

  it('gives a braked connection its own stream window back, even when braked again before the client acknowledged it', async () => {
    const clock = new FakeClock();
    const brake = new IngressBrake(clock, createLogger({ level: 'silent' }));
    const { server, client } = await connection();
    const window = server.localSettings.initialWindowSize;
    expect(window).toBeGreaterThan(0);

    await refuseBurst(brake, server);
    expect(brake.braked).toBe(1);
    await expect.poll(() => server.localSettings.initialWindowSize, { interval: 10 }).toBe(0);
    expect(client.remoteSettings.initialWindowSize).toBe(0);

    // The brake comes off; answers to requests sent before it still arrive as refusals, and
    // brake the connection again before the client has acknowledged its restored limit.
    clock.advance(2000);
    expect(brake.braked).toBe(0);
    await refuseBurst(brake, server);
    expect(brake.braked).toBe(1);

    clock.advance(2000);
    expect(brake.braked).toBe(0);
    await expect.poll(() => client.remoteSettings.initialWindowSize, { interval: 10 }).toBe(window);
  });

  it('holds the body of a request sent while braked, unread, and lets it through when the hint has passed', async () => {
    const clock = new FakeClock();
    const brake = new IngressBrake(clock, createLogger({ level: 'silent' }));
    const { server, client } = await connection();
    const received: string[] = [];
    server.on('stream', (stream) => {
      let body = '';
      stream.setEncoding('utf8').on('data', (d: string) => (body += d));
      stream.on('end', () => {
        received.push(body);
        stream.respond({ ':status': 200 });
        stream.end(body);
      });
    });
    await refuseBurst(brake, server);
    await expect.poll(() => client.remoteSettings.initialWindowSize, { interval: 10 }).toBe(0);

    const req = client.request({ ':method': 'POST', ':path': '/' });
    req.end('held');
    const answer = answerOf(req);
    await pingRoundTrip(client);
    expect(received).toEqual([]);

    clock.advance(2000);
    expect(await answer).toEqual({ status: 200, body: 'held', rstCode: 0 });
    expect(received).toEqual(['held']);
  });

  it('refuses none of a burst of streams the client opened before it learned of the brake, and keeps the connection', async () => {
    const clock = new FakeClock();
    const brake = new IngressBrake(clock, createLogger({ level: 'silent' }));
    const { server, client } = await connection();
    server.on('stream', (stream) => {
      stream.resume();
      stream.on('end', () => {
        stream.respond({ ':status': 200 });
        stream.end();
      });
    });
    await refuseBurst(brake, server);
    // Sent in the same turn as the brake's SETTINGS: all in flight before the client reads them.
    // More than Node's 1,000 invalid frames a session may see before it is closed: refused
    // streams count as such.
    const answers = Array.from({ length: 1_200 }, () => {
      const req = client.request({ ':method': 'POST', ':path': '/' });
      req.end('x');
      return answerOf(req);
    });
    await pingRoundTrip(client);
    clock.advance(2000);
    const outcomes = await Promise.all(answers);
    expect(outcomes.filter((o) => o.status !== 200 || o.rstCode !== 0)).toEqual([]);
    expect(server.destroyed).toBe(false);
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

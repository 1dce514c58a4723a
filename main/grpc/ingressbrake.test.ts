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
import { BRAKE_BURST, BRAKE_GRACE_MS, IngressBrake, MAX_BRAKE_MS } from './ingressbrake.js';

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

  /** Answers every request, once its body has been read, with the status `decide` gives. */
  function answerEveryRequest(server: Http2Session, decide: () => Promise<number>): void {
    server.on('stream', (stream) => {
      stream.resume();
      stream.on('end', () => {
        void decide().then((status) => {
          stream.respond({ ':status': status });
          stream.end();
        });
      });
    });
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

    // The brake comes off; once what it held has been answered, new refusals brake the
    // connection again, before the client has acknowledged its restored limit.
    clock.advance(2000);
    expect(brake.braked).toBe(0);
    clock.advance(BRAKE_GRACE_MS);
    await refuseBurst(brake, server);
    expect(brake.braked).toBe(1);

    // Braked again soon after the last: held twice as long.
    clock.advance(2000);
    expect(brake.braked).toBe(1);
    clock.advance(2000);
    expect(brake.braked).toBe(0);
    await expect.poll(() => client.remoteSettings.initialWindowSize, { interval: 10 }).toBe(window);
  });

  it('holds a connection that keeps coming back twice as long each time, up to its longest brake, and forgets after a quiet while', async () => {
    const clock = new FakeClock();
    const brake = new IngressBrake(clock, createLogger({ level: 'silent' }));
    const { server, client } = await connection();
    /** How long the next brake holds the connection (ms, to the second). */
    const nextBrakeMs = async (): Promise<number> => {
      // The client has read the last brake's SETTINGS and the window given back.
      await pingRoundTrip(client);
      await refuseBurst(brake, server);
      expect(brake.braked).toBe(1);
      let held = 0;
      while (brake.braked) {
        clock.advance(1000);
        held += 1000;
      }
      clock.advance(BRAKE_GRACE_MS);
      return held;
    };
    const lengths = [];
    for (let i = 0; i < 5; i++) lengths.push(await nextBrakeMs());
    expect(lengths).toEqual([2000, 4000, 8000, MAX_BRAKE_MS, MAX_BRAKE_MS]);

    clock.advance(60_000);
    expect(await nextBrakeMs()).toBe(2000);
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
    answerEveryRequest(server, async () => 200);
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

  it('answers every request a brake held before it brakes the connection again', async () => {
    const clock = new FakeClock();
    const brake = new IngressBrake(clock, createLogger({ level: 'silent' }));
    const { server, client } = await connection();
    // Every request is refused, as under a flood the server cannot take.
    answerEveryRequest(server, () =>
      brake.watch(Promise.reject(refusal()), user, () => server).catch(() => 429),
    );
    await refuseBurst(brake, server);
    await expect.poll(() => client.remoteSettings.initialWindowSize, { interval: 10 }).toBe(0);

    // Held bodies larger together than the connection's window: the client sends them in parts
    // as the server reads, so they are still arriving after the first BURST have been refused.
    const body = 'x'.repeat(4096);
    const answers = Array.from({ length: BRAKE_BURST * 4 }, () => {
      const req = client.request({ ':method': 'POST', ':path': '/' });
      req.end(body);
      return answerOf(req);
    });
    await pingRoundTrip(client);
    let answered = 0;
    for (const a of answers) void a.then(() => answered++);

    clock.advance(2000);
    await expect.poll(() => answered, { timeout: 10_000, interval: 20 }).toBe(answers.length);
    expect((await Promise.all(answers)).map((a) => a.status)).toEqual(answers.map(() => 429));
    expect(brake.braked).toBe(0);

    // Refusals after the grace brake it again.
    clock.advance(BRAKE_GRACE_MS);
    await refuseBurst(brake, server);
    expect(brake.braked).toBe(1);
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

/**
 * A page that does not read fast enough: its streams are ended with a clear error instead of
 * the server buffering for it without end; its connection stays usable.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kindInfo } from '../../client/api/kinds.js';
import { watchEventsIn, type BridgeMessage } from '../../client/bridge/protocol.js';
import { bridgeSender, type MessageSocket } from '../../main/bridge/websocket.js';
import { eventually } from '../support/wait.js';
import { startFixture, type Fixture } from './support.js';

describe('bridgeSender', () => {
  /** A socket that never writes anything out until told to. */
  function stuckSocket() {
    const pending: Array<{ bytes: number; done?: () => void }> = [];
    const socket = {
      readyState: 1,
      get bufferedAmount() {
        return pending.reduce((n, p) => n + p.bytes, 0);
      },
      send(data: string, cb?: () => void) {
        pending.push({ bytes: Buffer.byteLength(data), done: cb });
      },
      /** The oldest frame leaves. */
      flushOne() {
        pending.shift()?.done?.();
      },
    } satisfies MessageSocket & { flushOne(): void };
    return socket;
  }
  const event = (id: number, size: number): BridgeMessage => ({
    id,
    op: 'event',
    event: { type: 'ADDED', object: { metadata: { name: 'x'.repeat(size) } } },
  });

  it('calls onBehind when stream data waiting passes the limit', () => {
    const socket = stuckSocket();
    const behind: number[] = [];
    const send = bridgeSender(socket, 10_000, (n) => behind.push(n));
    for (let i = 0; i < 9; i++) send(event(1, 1000));
    expect(behind).toEqual([]);
    send(event(1, 1000));
    expect(behind).toHaveLength(1);
    expect(behind[0]).toBeGreaterThan(10_000);
  });

  it('does not count a large reply the page asked for, once it is on its way', () => {
    const socket = stuckSocket();
    const behind: number[] = [];
    const send = bridgeSender(socket, 10_000, (n) => behind.push(n));
    send({ id: 2, op: 'result', value: { items: 'y'.repeat(100_000) } });
    send(event(1, 1000));
    expect(behind).toEqual([]);
    socket.flushOne();
    send(event(1, 1000));
    expect(behind).toEqual([]);
  });

  it('sends nothing on a socket that is no longer open', () => {
    const socket = { ...stuckSocket(), readyState: 2 };
    let sent = 0;
    socket.send = () => void sent++;
    bridgeSender(socket, 10, () => undefined)(event(1, 100));
    expect(sent).toBe(0);
  });
});

describe('a WebSocket whose reader falls behind', () => {
  let f: Fixture;
  beforeAll(async () => {
    f = await startFixture({ maxBufferedBytes: 1024 * 1024 });
    // ~24 MiB of objects: far more than the socket buffers of both ends hold.
    const admin = f.tcp.cp.client();
    const big = 'x'.repeat(240 * 1024);
    for (let i = 0; i < 100; i++) {
      await admin.create({
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: `big-${i}`, labels: { size: 'big' }, annotations: { filler: big } },
      });
    }
  }, 120_000);
  afterAll(() => f?.close());

  it('ends its watch with TooManyRequests, stops the watch, and keeps the socket usable', async () => {
    const cache = f.tcp.cp.api.cacher.cache(kindInfo('Namespace'));
    const before = cache.watcherCount;
    const conn = await f.connect({ bearer: f.tcp.cp.adminToken, origin: null });
    conn.ws.pause();
    const watch = conn.send({
      op: 'watch',
      kind: 'Namespace',
      options: { resourceVersion: '0', labelSelector: 'size=big' },
    });
    await eventually(() => cache.watcherCount === before, 'the watch to be stopped on the server');
    conn.ws.resume();

    const end = await conn.next((m) => m.id === watch && m.op === 'end', 'the watch to end', 30_000);
    expect(end).toMatchObject({ op: 'end', error: { reason: 'TooManyRequests' } });
    expect((end as any).error.message).toMatch(/fell more than 1024 KiB behind.*watch again/);
    const events = conn.of(watch).flatMap(watchEventsIn);
    expect(events.length).toBeGreaterThan(0);
    expect(events.length).toBeLessThan(100);

    expect(await conn.value({ op: 'hello' })).toMatchObject({ protocol: 1 });
    conn.ws.close();
  });
});

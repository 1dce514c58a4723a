/**
 * What one client may hold on the gRPC server, over real TLS on loopback: a connection that
 * never speaks is closed after the preface deadline, one address gets only so many
 * connections, one connection only so many streams, and large list answers take turns while
 * small calls go through. Deadlines run on a FakeClock: nothing here waits on real time.
 */
import * as grpc from '@grpc/grpc-js';
import * as net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '../../client/client.js';
import { FakeClock } from '../../client/util/clock.js';
import { ListRequest } from '../../proto/gen/kubelab/v1/api.js';
import { startTestControlPlane, type TestControlPlane } from '../support/controlplane.js';
import { startServerProcess, type ServerProcess } from '../support/serverproc.js';
import {
  ErrorCode,
  FrameType,
  grpcMessage,
  RawHttp2,
  SETTINGS_MAX_CONCURRENT_STREAMS,
  tlsToLoopback,
  type Frame,
} from '../support/rawhttp2.js';

const HEALTH_CHECK = '/grpc.health.v1.Health/Check';
const HEALTH_WATCH = '/grpc.health.v1.Health/Watch';
const LIST = '/kubelab.v1.Resources/List';
/** The DATA of a Health answer: HealthCheckResponse { status: SERVING }. */
const SERVING = grpcMessage(Buffer.from([0x08, 0x01]));
const bytes = (b: Buffer) => b;
const tick = () => new Promise((resolve) => setTimeout(resolve, 10));

const dataOn = (streamId: number) => (f: Frame) => f.type === FrameType.DATA && f.streamId === streamId;
const endOf = (streamId: number) => (f: Frame) =>
  f.streamId === streamId && f.type === FrameType.HEADERS && (f.flags & 0x1) !== 0;

/** A Health/Check on a stream of `conn`: the connection is being served. */
async function healthCheck(conn: RawHttp2, streamId: number): Promise<Buffer> {
  conn.request(streamId, HEALTH_CHECK, { message: new Uint8Array() });
  return (await conn.next(dataOn(streamId))).payload;
}

/** Resolves to what happened first: the TLS handshake finished, or the server closed the socket. */
function tlsOutcome(port: number, caPem: string): Promise<'connected' | 'closed'> {
  const socket = tlsToLoopback(port, caPem);
  socket.on('error', () => {});
  return new Promise((resolve) => {
    socket.once('secureConnect', () => {
      resolve('connected');
      socket.destroy();
    });
    socket.once('close', () => resolve('closed'));
  });
}

function rawClient(t: TestControlPlane): grpc.Client {
  return new grpc.Client(`127.0.0.1:${t.cp.port}`, grpc.credentials.createSsl(Buffer.from(t.caPem)), {
    'grpc.ssl_target_name_override': 'localhost',
  });
}

describe('a connection that never sends the HTTP/2 preface', () => {
  const clock = new FakeClock();
  let t: TestControlPlane;
  beforeAll(async () => {
    t = await startTestControlPlane({ controllers: false, clock, serverLimits: { prefaceTimeoutMs: 5_000 } });
  });
  afterAll(() => t.close());

  it('is closed after the deadline, TLS done or not, while one that spoke is served on', async () => {
    const port = t.cp.port;
    const silentTcp = net.connect(port, '127.0.0.1');
    silentTcp.on('error', () => {});
    const silentTls = tlsToLoopback(port, t.caPem);
    silentTls.on('error', () => {});
    await new Promise((resolve) => silentTls.once('secureConnect', resolve));
    const speaking = await RawHttp2.connect(port, t.caPem);
    let speakingClosed = false;
    void speaking.closed.then(() => (speakingClosed = true));

    const closed = { tcp: false, tls: false };
    silentTcp.once('close', () => (closed.tcp = true));
    silentTls.once('close', () => (closed.tls = true));
    // The server may not have accepted them yet: each round gives it time, then a deadline.
    while (!closed.tcp || !closed.tls) {
      clock.advance(5_000);
      await tick();
    }

    expect(speakingClosed).toBe(false);
    expect(await healthCheck(speaking, 1)).toEqual(SERVING);
    speaking.close();
  });
});

describe('connections from one address', () => {
  let t: TestControlPlane;
  beforeAll(async () => {
    t = await startTestControlPlane({ controllers: false, serverLimits: { maxConnectionsPerAddress: 3 } });
  });
  afterAll(() => t.close());

  it('beyond the limit are closed as they arrive; those open keep working, and a freed place is taken again', async () => {
    const open = [];
    for (let i = 0; i < 3; i++) open.push(await RawHttp2.connect(t.cp.port, t.caPem));

    expect(await tlsOutcome(t.cp.port, t.caPem)).toBe('closed');
    for (const conn of open) expect(await healthCheck(conn, 1)).toEqual(SERVING);

    open[0].close();
    // The server sees the close in its own time; until then a new connection is still refused.
    let again: RawHttp2 | undefined;
    while (!again)
      again = await RawHttp2.connect(t.cp.port, t.caPem).catch(() => tick().then(() => undefined));
    expect(await healthCheck(again, 1)).toEqual(SERVING);
    for (const conn of [again, ...open.slice(1)]) conn.close();
  });
});

describe('kubelab server --max-connections-per-address', () => {
  let server: ServerProcess | undefined;
  afterAll(() => server?.stop());

  it('sets the limit, and the server log says how to raise it', async () => {
    server = await startServerProcess(['--max-connections-per-address', '2']);
    const open = [
      await RawHttp2.connect(server.port, server.caPem),
      await RawHttp2.connect(server.port, server.caPem),
    ];
    expect(await tlsOutcome(server.port, server.caPem)).toBe('closed');
    expect(await healthCheck(open[1], 1)).toEqual(SERVING);
    for (const conn of open) conn.close();
    // The log line is written as the connection is refused; stderr may take a moment to arrive.
    while (!server.output().includes('refusing connections from 127.0.0.1')) await tick();
    expect(server.output()).toContain('raise the limit (kubelab server --max-connections-per-address)');
  });
});

describe('streams on one connection', () => {
  let t: TestControlPlane;
  beforeAll(async () => {
    t = await startTestControlPlane({ controllers: false, serverLimits: { maxConcurrentStreams: 2 } });
  });
  afterAll(() => t.close());

  it('are limited in the SETTINGS the server sends', async () => {
    const conn = await RawHttp2.connect(t.cp.port, t.caPem);
    expect(conn.serverSettings.get(SETTINGS_MAX_CONCURRENT_STREAMS)).toBe(2);
    conn.close();
  });

  it('beyond the limit wait at a gRPC client until one ends', async () => {
    const client = rawClient(t);
    const other = rawClient(t);
    const events: string[] = [];
    const watch = (name: string) => {
      const call = client.makeServerStreamRequest(HEALTH_WATCH, bytes, bytes, Buffer.alloc(0));
      call.on('error', () => {});
      const first = new Promise<void>((resolve) =>
        call.once('data', () => {
          events.push(name);
          resolve();
        }),
      );
      return { call, first };
    };
    const one = watch('first');
    await one.first;
    const two = watch('second');
    await two.first;
    const three = watch('third');
    // A round trip on another connection: time enough for the third to be answered, were it sent.
    await new Promise((resolve) =>
      other.makeUnaryRequest(HEALTH_CHECK, bytes, bytes, Buffer.alloc(0), resolve),
    );
    events.push('first cancelled');
    one.call.cancel();
    await three.first;
    expect(events).toEqual(['first', 'second', 'first cancelled', 'third']);
    two.call.cancel();
    three.call.cancel();
    client.close();
    other.close();
  });

  it('beyond the limit from a client that ignores it end that connection, not the others', async () => {
    const bystander = await RawHttp2.connect(t.cp.port, t.caPem);
    const rogue = await RawHttp2.connect(t.cp.port, t.caPem);
    // Two watches wait for their request message, holding both streams; a third is one too many.
    rogue.request(1, HEALTH_WATCH);
    rogue.request(3, HEALTH_WATCH);
    rogue.request(5, HEALTH_CHECK, { message: new Uint8Array() });
    const outcome = await Promise.race([
      rogue.next(dataOn(5)).then(() => 'served'),
      rogue.closed.then(() => 'closed'),
    ]);
    expect(outcome).toBe('closed');
    const goaway = rogue.frames.find((f) => f.type === FrameType.GOAWAY);
    expect(goaway?.payload.readUInt32BE(4)).not.toBe(ErrorCode.NO_ERROR);
    expect(await healthCheck(bystander, 1)).toEqual(SERVING);
    bystander.close();
  });
});

describe('large list answers', () => {
  const clock = new FakeClock();
  let t: TestControlPlane;
  let admin: Client;
  const listRequest = ListRequest.encode({ kind: 'Pod', namespace: 'default' }).finish();
  const LARGE = 64 * 1024;

  beforeAll(async () => {
    t = await startTestControlPlane({
      controllers: false,
      clock,
      serverLimits: { largeListBytes: LARGE, largeListConcurrency: 1, largeListTurnMs: 1_000 },
    });
    const pad = 'x'.repeat(1500);
    const inProcess = t.cp.client();
    // ~160 KB of pods: a large answer, and more than an HTTP/2 stream's initial window (64 KiB).
    for (let i = 0; i < 100; i++) {
      await inProcess.create({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: `p-${i}`, namespace: 'default', annotations: { pad } },
        spec: { containers: [{ name: 'c', command: ['sleep', '1'] }] },
      });
    }
    admin = t.client();
  });
  afterAll(() => t.close());

  /** A list whose answer the server starts and cannot finish: this client does not read. */
  async function stuckList(): Promise<RawHttp2> {
    const conn = await RawHttp2.connect(t.cp.port, t.caPem);
    conn.request(1, LIST, { token: t.cp.adminToken, message: listRequest });
    await conn.next(dataOn(1));
    return conn;
  }

  /**
   * A list from a client that reads everything, once its answer's headers arrived (the
   * server has the answer ready), and after a small call from someone else went through.
   */
  async function waitingList(): Promise<RawHttp2> {
    const conn = await RawHttp2.connect(t.cp.port, t.caPem);
    conn.request(1, LIST, { token: t.cp.adminToken, message: listRequest });
    conn.windowUpdate(1, 1 << 20);
    await conn.next((f) => f.type === FrameType.HEADERS && f.streamId === 1);
    await admin.get('Pod', 'p-0', { namespace: 'default' });
    return conn;
  }

  /** A large answer being sent to a client that does not read, and another waiting its turn. */
  async function oneSentOneWaiting(): Promise<{ first: RawHttp2; second: RawHttp2 }> {
    const first = await stuckList();
    const second = await waitingList();
    expect(second.dataBytes(1)).toBe(0);
    return { first, second };
  }

  /** All of a waiting list's answer, once it has come. */
  async function answerOf(conn: RawHttp2): Promise<number> {
    await conn.next(endOf(1));
    conn.close();
    return conn.dataBytes(1);
  }

  it('wait until the one being sent has been handed over', async () => {
    const { first, second } = await oneSentOneWaiting();

    first.windowUpdate(1, 1 << 20);
    expect(await answerOf(second)).toBeGreaterThan(LARGE);
    await first.next(endOf(1));
    expect(first.dataBytes(1)).toBeGreaterThan(LARGE);
    first.close();
  });

  it('wait until the one being sent is cancelled', async () => {
    const { first, second } = await oneSentOneWaiting();

    first.reset(1);
    expect(await answerOf(second)).toBeGreaterThan(LARGE);
    first.close();
  });

  it('wait no longer than a turn for a client that does not read', async () => {
    const { first, second } = await oneSentOneWaiting();

    clock.advance(1_000);
    expect(await answerOf(second)).toBeGreaterThan(LARGE);
    expect(first.frames.some(endOf(1))).toBe(false);
    first.close();
  });
});

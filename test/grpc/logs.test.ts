/**
 * Pod logs through the control plane (Kubernetes' pods/log) over the agents' reverse tunnels,
 * end to end on a real control plane (TLS, tokens): agents connect out with their node
 * credentials and serve a LogSource; clients read through Resources/Logs (and in-process).
 * Covers option pass-through, cancellation reaching the agent, authorization per role and
 * node, the errors a person meets, reconnecting agents, and a slow reader's bounded cost.
 */
import * as grpc from '@grpc/grpc-js';
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../client/api/errors.js';
import type { Pod } from '../../client/api/types.js';
import type { Client, LogStream } from '../../client/client.js';
import { joinCluster, TokensClient } from '../../client/grpc/cluster.js';
import { FakeClock, type Clock } from '../../client/util/clock.js';
import { AgentTunnelClient } from '../../agent/tunnel.js';
import { quietLogger } from '../../agent/logger.js';
import type { LogRequest, LogSource } from '../../agent/runtime/types.js';
import { TunnelDown, TunnelUp } from '../../proto/gen/kubelab/v1/tunnel.js';
import { startTestControlPlane, type TestControlPlane } from '../support/controlplane.js';
import { startProxy, type CuttableProxy } from '../support/proxy.js';

/** Per-stream limit of the control plane under test: small, so the slow reader hits it quickly. */
const STREAM_LIMIT = 512 * 1024;
const FAST_BACKOFF = { initialMs: 50, maxMs: 200 };

/** Emits numbered lines (honouring tailLines and timestamps); with follow, one more every 20 ms. */
class LineSource implements LogSource {
  readonly requests: LogRequest[] = [];
  readonly signals: AbortSignal[] = [];

  constructor(private readonly node: string) {}

  async stream(req: LogRequest, write: (chunk: Buffer) => boolean, signal: AbortSignal): Promise<void> {
    this.requests.push(req);
    this.signals.push(signal);
    if (req.previous && req.container === 'sidecar')
      throw new ApiError(
        'BadRequest',
        `previous terminated container "sidecar" in pod ${req.podUid} not found`,
      );
    const line = (i: number) =>
      Buffer.from(
        `${req.timestamps ? '2026-11-29T10:00:00Z ' : ''}${this.node}/${req.container} line ${i}\n`,
      );
    const first = 5;
    const from = req.tailLines !== undefined ? first - req.tailLines + 1 : 1;
    for (let i = Math.max(1, from); i <= first; i++) if (!write(line(i))) return;
    if (!req.follow) return;
    for (let i = first + 1; !signal.aborted; i++) {
      await new Promise((r) => setTimeout(r, 20));
      if (signal.aborted || !write(line(i))) return;
    }
  }

  get last(): { req: LogRequest; signal: AbortSignal } {
    return { req: this.requests.at(-1)!, signal: this.signals.at(-1)! };
  }
}

/** Writes 64 KiB chunks, 512 KiB a millisecond at most, until stopped. */
class FloodSource implements LogSource {
  produced = 0;
  signal: AbortSignal | undefined;

  async stream(_req: LogRequest, write: (chunk: Buffer) => boolean, signal: AbortSignal): Promise<void> {
    this.signal = signal;
    const chunk = Buffer.alloc(64 * 1024, 'x');
    while (!signal.aborted && this.produced < 256 * 1024 * 1024) {
      if (!write(chunk)) return;
      this.produced += chunk.length;
      if (this.produced % (512 * 1024) === 0) await new Promise((r) => setTimeout(r, 1));
      else await new Promise((r) => setImmediate(r));
    }
  }
}

let t: TestControlPlane;
let server: string;
let admin: Client;
let joinToken: string;
const agents: AgentTunnelClient[] = [];
const proxies: CuttableProxy[] = [];
const sources = { a: new LineSource('node-a'), b: new LineSource('node-b') };

async function eventually(ok: () => boolean | Promise<boolean>, what: string, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const credentials = new Map<string, { token: string; caPem: string }>();

/**
 * The node's credential: joined once, then the same one (as its agent holds it). Joining a live
 * node's name again is refused, and would revoke its agent's credential and tunnel anyway.
 */
async function nodeCredential(nodeName: string): Promise<{ token: string; caPem: string }> {
  let cred = credentials.get(nodeName);
  if (!cred) {
    const joined = await joinCluster(server, joinToken, nodeName);
    cred = { token: joined.token, caPem: joined.caPem };
    credentials.set(nodeName, cred);
  }
  return cred;
}

async function startAgent(
  nodeName: string,
  source: LogSource,
  options: {
    servers?: string[];
    credential?: { token: string; caPem: string };
    maxPending?: number;
    clock?: Clock;
  } = {},
): Promise<AgentTunnelClient> {
  const cred = options.credential ?? (await nodeCredential(nodeName));
  const agent = new AgentTunnelClient({
    servers: options.servers ?? [server],
    clock: options.clock,
    token: cred.token,
    caPem: cred.caPem,
    nodeName,
    source,
    logger: quietLogger(),
    backoff: FAST_BACKOFF,
    maxPendingBytesPerStream: options.maxPending,
  });
  agents.push(agent);
  agent.start();
  await eventually(() => t.cp.tunnels.connected(nodeName) && agent.connected, `${nodeName}'s tunnel`);
  return agent;
}

const pod = (name: string, nodeName?: string, containers = ['app'], init: string[] = []): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default' },
  spec: {
    containers: containers.map((c) => ({ name: c, command: ['sleep', '1000'] })),
    ...(init.length ? { initContainers: init.map((c) => ({ name: c, command: ['true'] })) } : {}),
    ...(nodeName ? { nodeName } : {}),
  },
});

async function readAll(stream: LogStream): Promise<string> {
  let text = '';
  for await (const chunk of stream) text += chunk.toString();
  return text;
}

/** Reads from an iterator until `n` lines arrived (the stream stays open). */
async function readLines(it: AsyncIterator<Buffer>, n: number): Promise<string> {
  let text = '';
  while (text.split('\n').length - 1 < n) {
    const r = await it.next();
    if (r.done) break;
    text += r.value.toString();
  }
  return text;
}

async function failure(p: Promise<unknown>): Promise<ApiError> {
  try {
    await p;
  } catch (err) {
    expect(err, String(err)).toBeInstanceOf(ApiError);
    return err as ApiError;
  }
  throw new Error('expected a failure');
}

beforeAll(async () => {
  t = await startTestControlPlane({ controllers: false, logStreamBufferBytes: STREAM_LIMIT });
  server = `https://127.0.0.1:${t.cp.port}`;
  admin = t.client();
  const tokens = new TokensClient({ server, token: t.cp.adminToken, caPem: t.caPem });
  joinToken = (await tokens.create()).token!;
  tokens.close();
  await admin.create(pod('on-a', 'node-a'));
  await admin.create(pod('on-b', 'node-b'));
  await admin.create(pod('duo', 'node-a', ['web', 'sidecar'], ['init']));
  await admin.create(pod('pending'));
  await admin.create(pod('on-ghost', 'node-ghost'));
  await startAgent('node-a', sources.a);
  await startAgent('node-b', sources.b);
});

afterAll(async () => {
  for (const a of agents) await a.stop();
  for (const p of proxies) await p.close();
  await t?.close();
});

describe('pod logs through the agent tunnel', () => {
  it('streams a pod’s log to an admin, passing every option through to the agent', async () => {
    const uid = (await admin.get('Pod', 'on-a', { namespace: 'default' })).metadata?.uid;
    expect(await readAll(await admin.logs('default', 'on-a'))).toBe(
      [1, 2, 3, 4, 5].map((i) => `node-a/app line ${i}\n`).join(''),
    );
    expect(sources.a.last.req).toEqual({
      podUid: uid,
      container: 'app',
      follow: false,
      previous: false,
      timestamps: false,
    });

    const before = Date.now();
    const stream = await admin.logs('default', 'on-a', {
      tailLines: 2,
      follow: true,
      previous: true,
      timestamps: true,
      sinceSeconds: 60,
      limitBytes: 100_000,
    });
    const it = stream[Symbol.asyncIterator]();
    // The tail, then lines written later (follow).
    const text = await readLines(it, 4);
    expect(text.split('\n').slice(0, 4)).toEqual([
      '2026-11-29T10:00:00Z node-a/app line 4',
      '2026-11-29T10:00:00Z node-a/app line 5',
      '2026-11-29T10:00:00Z node-a/app line 6',
      '2026-11-29T10:00:00Z node-a/app line 7',
    ]);
    const { req, signal } = sources.a.last;
    expect(req).toMatchObject({
      podUid: uid,
      container: 'app',
      tailLines: 2,
      follow: true,
      previous: true,
      timestamps: true,
      limitBytes: 100_000,
    });
    expect(req.sinceTime).toBeGreaterThanOrEqual(before - 60_000 - 1000);
    expect(req.sinceTime).toBeLessThanOrEqual(Date.now() - 60_000 + 1000);
    expect(signal.aborted).toBe(false);

    // The reader stops: the agent's stream is cancelled (its AbortSignal fires).
    stream.stop();
    await eventually(() => signal.aborted, "the agent-side AbortSignal after the client's stop");
    await eventually(() => t.cp.tunnels.openStreams === 0, 'the stream to leave the registry');
  });

  it('sends sinceTime as epoch milliseconds and picks a named container of a multi-container pod', async () => {
    const text = await readAll(
      await admin.logs('default', 'duo', { container: 'sidecar', sinceTime: '2026-11-29T09:00:00Z' }),
    );
    expect(text).toContain('node-a/sidecar line 1');
    expect(sources.a.last.req).toMatchObject({
      container: 'sidecar',
      sinceTime: Date.parse('2026-11-29T09:00:00Z'),
    });
    // Init containers have logs too.
    expect(await readAll(await admin.logs('default', 'duo', { container: 'init', tailLines: 1 }))).toBe(
      'node-a/init line 5\n',
    );
  });

  it('reads through the in-process client as well (the same path in main)', async () => {
    const viewer = t.cp.client({ name: 'alice', role: 'viewer' });
    expect(await readAll(await viewer.logs('default', 'on-b', { tailLines: 1 }))).toBe('node-b/app line 5\n');
    const stream = await t.cp.client().logs('default', 'on-a', { follow: true });
    const it = stream[Symbol.asyncIterator]();
    expect(await readLines(it, 6)).toContain('node-a/app line 6');
    const { signal } = sources.a.last;
    stream.stop();
    await eventually(() => signal.aborted, 'the agent-side AbortSignal after an in-process stop');
  });

  it("tells the reader when the agent cannot serve the log, with the agent's reason", async () => {
    const stream = await admin.logs('default', 'duo', { container: 'sidecar', previous: true });
    const err = await failure(readAll(stream));
    expect(err.reason).toBe('BadRequest');
    expect(err.message).toContain('the agent on node node-a could not serve the log of container sidecar');
    expect(err.message).toContain('previous terminated container "sidecar"');
  });
});

describe('who may read logs', () => {
  it("lets a viewer read, a node read its own pods' logs, and refuses a node other nodes' pods", async () => {
    expect(await readAll(await t.client({ role: 'viewer' }).logs('default', 'on-a', { tailLines: 1 }))).toBe(
      'node-a/app line 5\n',
    );
    const b = t.client({ token: (await nodeCredential('node-b')).token });
    expect(await readAll(await b.logs('default', 'on-b', { tailLines: 1 }))).toBe('node-b/app line 5\n');
    const denied = await failure(b.logs('default', 'on-a'));
    expect(denied.code).toBe(grpc.status.PERMISSION_DENIED);
    expect(denied.message).toContain('node "node-b" may not read the logs of pod default/on-a');
    expect(denied.message).toContain('only the logs of pods bound to its own node');
  });

  it('refuses a join token', async () => {
    const err = await failure(t.client({ role: 'join' }).logs('default', 'on-a'));
    expect(err.code).toBe(grpc.status.PERMISSION_DENIED);
    expect(err.message).toContain('pods/log "on-a" is forbidden');
    expect(err.message).toContain('a join token can only join a node');
  });
});

describe('errors a person meets', () => {
  it('no tunnel to the node: says the agent is not connected and what to check', async () => {
    const err = await failure(admin.logs('default', 'on-ghost'));
    expect(err.code).toBe(grpc.status.FAILED_PRECONDITION);
    expect(err.message).toContain('the agent on node node-ghost is not connected; is it running?');
  });

  it('a pod not scheduled, a pod missing, an ambiguous or unknown container, bad options', async () => {
    const pending = await failure(admin.logs('default', 'pending'));
    expect(pending.code).toBe(grpc.status.FAILED_PRECONDITION);
    expect(pending.message).toContain('is not scheduled to a node yet');

    expect((await failure(admin.logs('default', 'nope'))).code).toBe(grpc.status.NOT_FOUND);

    const ambiguous = await failure(admin.logs('default', 'duo'));
    expect(ambiguous.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(ambiguous.message).toContain('has 2 containers (web, sidecar (init containers: init))');
    expect(ambiguous.causes.map((c) => c.field)).toEqual(['container']);

    const unknown = await failure(admin.logs('default', 'duo', { container: 'db' }));
    expect(unknown.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(unknown.message).toContain('container "db" is not valid for pod default/duo');
    expect(unknown.causes.map((c) => c.field)).toEqual(['container']);

    const bad = await failure(
      admin.logs('default', 'on-a', { tailLines: -1, sinceSeconds: 5, sinceTime: '2026-11-29T10:00:00Z' }),
    );
    expect(bad.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(bad.causes.map((c) => c.field).sort()).toEqual(['sinceSeconds', 'tailLines']);
  });
});

describe('the tunnel', () => {
  it('refuses anything but a node credential, and a hello naming another node', async () => {
    const raw = new grpc.Client(`127.0.0.1:${t.cp.port}`, grpc.credentials.createSsl(Buffer.from(t.caPem)), {
      'grpc.ssl_target_name_override': 'localhost',
    });
    const connect = (token: string, hello: string) =>
      new Promise<grpc.ServiceError>((resolve) => {
        const md = new grpc.Metadata();
        md.set('authorization', `Bearer ${token}`);
        const call = raw.makeBidiStreamRequest(
          '/kubelab.v1.AgentTunnel/Connect',
          (m: TunnelUp) => Buffer.from(TunnelUp.encode(m).finish()),
          (b: Buffer) => TunnelDown.decode(b),
          md,
        );
        call.on('data', () => undefined);
        call.on('error', resolve);
        call.write({ hello: { nodeName: hello } });
      });
    try {
      const viewer = await connect(t.tokenFor('viewer'), 'node-a');
      expect(viewer.code).toBe(grpc.status.PERMISSION_DENIED);
      expect(viewer.details).toContain('AgentTunnel.Connect is only for agents');
      const asAdmin = await connect(t.cp.adminToken, 'node-a');
      expect(asAdmin.code).toBe(grpc.status.PERMISSION_DENIED);
      const other = await connect((await nodeCredential('node-c')).token, 'node-a');
      expect(other.code).toBe(grpc.status.PERMISSION_DENIED);
      expect(other.details).toContain('this credential belongs to node "node-c"');
      // node-a's own tunnel was not disturbed by any of this.
      expect(await readAll(await admin.logs('default', 'on-a', { tailLines: 1 }))).toBe(
        'node-a/app line 5\n',
      );
    } finally {
      raw.close();
    }
  });

  it('serves again after the agent restarts, and after its connection is cut', async () => {
    const source = new LineSource('node-p');
    await admin.create(pod('on-p', 'node-p'));
    const cred = await nodeCredential('node-p');
    const proxy = await startProxy(t.cp.port);
    proxies.push(proxy);
    const agent = await startAgent('node-p', source, {
      servers: [`127.0.0.1:${proxy.port}`],
      credential: cred,
    });

    // Cut the connection mid-stream: the reader hears it, the agent's stream is aborted…
    const stream = await admin.logs('default', 'on-p', { follow: true });
    const it = stream[Symbol.asyncIterator]();
    expect(await readLines(it, 6)).toContain('node-p/app line 6');
    const { signal } = source.last;
    proxy.cut();
    const lost = await failure(
      (async () => {
        for (let r = await it.next(); !r.done; r = await it.next());
      })(),
    );
    expect(lost.reason).toBe('Unavailable');
    expect(lost.message).toContain('the connection to the agent on node node-p was lost');
    await eventually(() => signal.aborted, 'the agent-side AbortSignal after the cut');
    // …and the agent reconnects by itself and serves again.
    await eventually(() => agent.connected && t.cp.tunnels.connected('node-p'), 'the agent to reconnect');
    expect(await readAll(await admin.logs('default', 'on-p', { tailLines: 1 }))).toBe('node-p/app line 5\n');

    // Stopped agent: the clear error; started again: serves.
    await agent.stop();
    await eventually(() => !t.cp.tunnels.connected('node-p'), 'the tunnel to close');
    expect((await failure(admin.logs('default', 'on-p'))).message).toContain(
      'the agent on node node-p is not connected',
    );
    agent.start();
    await eventually(() => t.cp.tunnels.connected('node-p'), 'the restarted agent');
    expect(await readAll(await admin.logs('default', 'on-p', { tailLines: 2 }))).toBe(
      'node-p/app line 4\nnode-p/app line 5\n',
    );
  });

  it('a newer connection from the same node replaces the older one, ending its streams', async () => {
    await admin.create(pod('on-r', 'node-r'));
    const cred = await nodeCredential('node-r');
    const older = new LineSource('node-r');
    // The older agent's clock stands still: once replaced, it does not take the tunnel back.
    const first = await startAgent('node-r', older, { credential: cred, clock: new FakeClock() });
    const stream = await admin.logs('default', 'on-r', { follow: true });
    const it = stream[Symbol.asyncIterator]();
    expect(await readLines(it, 5)).toContain('node-r/app line 5');
    const { signal } = older.last;

    await startAgent('node-r', new LineSource('node-r2'), { credential: cred });
    const ended = await failure(
      (async () => {
        for (let r = await it.next(); !r.done; r = await it.next());
      })(),
    );
    expect(ended.reason).toBe('Unavailable');
    expect(ended.message).toContain('the agent on node node-r reconnected');
    await eventually(() => signal.aborted && !first.connected, 'the older tunnel to be closed');
    expect(await readAll(await admin.logs('default', 'on-r', { tailLines: 1 }))).toBe('node-r2/app line 5\n');
  });

  it('moves to the next replica when one refuses, waiting on the injected clock', async () => {
    let attempts = 0;
    const dead: Server = createServer((socket) => {
      attempts++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => dead.listen(0, '127.0.0.1', resolve));
    const deadPort = (dead.address() as { port: number }).port;
    try {
      await admin.create(pod('on-f2', 'node-f2'));
      const clock = new FakeClock();
      const cred = await nodeCredential('node-f2');
      const agent = new AgentTunnelClient({
        servers: [`127.0.0.1:${deadPort}`, server],
        token: cred.token,
        caPem: cred.caPem,
        nodeName: 'node-f2',
        source: new LineSource('node-f2'),
        logger: quietLogger(),
        clock,
        backoff: { initialMs: 1000, maxMs: 1000 },
      });
      agents.push(agent);
      agent.start();
      // The first replica fails; the agent then waits for its backoff, on the fake clock.
      await eventually(() => attempts > 0 && clock.pendingTimers() === 1, 'the first attempt to fail');
      await new Promise((r) => setTimeout(r, 200));
      expect(agent.connected).toBe(false);
      clock.advance(1000);
      await eventually(() => agent.connected && t.cp.tunnels.connected('node-f2'), 'the second replica');
      expect(await readAll(await admin.logs('default', 'on-f2', { tailLines: 1 }))).toBe(
        'node-f2/app line 5\n',
      );
    } finally {
      await new Promise<void>((resolve) => dead.close(() => resolve()));
    }
  });

  it('never lets what an agent sends break the server', async () => {
    const raw = new grpc.Client(`127.0.0.1:${t.cp.port}`, grpc.credentials.createSsl(Buffer.from(t.caPem)), {
      'grpc.ssl_target_name_override': 'localhost',
    });
    const token = (await nodeCredential('node-x')).token;
    const send = (messages: Buffer[]) =>
      new Promise<grpc.ServiceError>((resolve) => {
        const md = new grpc.Metadata();
        md.set('authorization', `Bearer ${token}`);
        const call = raw.makeBidiStreamRequest(
          '/kubelab.v1.AgentTunnel/Connect',
          (b: Buffer) => b,
          (b: Buffer) => b,
          md,
        );
        call.on('data', () => undefined);
        call.on('error', resolve);
        for (const m of messages) call.write(m);
      });
    const up = (m: TunnelUp) => Buffer.from(TunnelUp.encode(m).finish());
    try {
      const noHello = await send([up({ data: { id: 1, data: Buffer.from('x') } })]);
      expect(noHello.code).toBe(grpc.status.INVALID_ARGUMENT);
      expect(noHello.details).toContain('first message on the tunnel must be hello');
      const garbage = await send([Buffer.from([0x0a, 0xff, 0xff])]);
      expect(garbage.code).toBe(grpc.status.INVALID_ARGUMENT);
      expect(garbage.details).toContain('not a valid TunnelUp');
      // After a hello: data and ends for streams that do not exist are dropped, garbage ends the call.
      const late = await send([
        up({ hello: { nodeName: 'node-x' } }),
        up({ data: { id: 77, data: Buffer.from('stray') } }),
        up({ end: { id: 78, error: 'x'.repeat(10_000) } }),
        up({}),
        Buffer.from([0x0a, 0xff, 0xff]),
      ]);
      expect(late.code).toBe(grpc.status.INVALID_ARGUMENT);
      expect(await readAll(await admin.logs('default', 'on-a', { tailLines: 1 }))).toBe(
        'node-a/app line 5\n',
      );
    } finally {
      raw.close();
    }
  });
});

describe('a slow reader', () => {
  it('costs the server a bounded buffer: its stream is stopped at the agent instead', async () => {
    const flood = new FloodSource();
    await admin.create(pod('flood', 'node-f'));
    // Agent, server and client share this process, so the agent's upload is slow here: let it
    // queue plenty, so that it is the server's limit, not the agent's, that is tested.
    await startAgent('node-f', flood, { maxPending: 256 * 1024 * 1024 });
    // A small HTTP/2 window, so the client's not reading reaches the server quickly.
    const slow = t.client({ channelOptions: { 'grpc-node.flow_control_window': 64 * 1024 } });
    t.cp.tunnels.resetPeak();
    const stream = await slow.logs('default', 'flood', { follow: true });
    await eventually(() => flood.signal?.aborted === true, 'the server to cancel the flood at the agent');
    // The server held up to its limit for the reader, never more, and then stopped the source.
    expect(t.cp.tunnels.peakBufferedBytes).toBeGreaterThan(STREAM_LIMIT / 2);
    expect(t.cp.tunnels.peakBufferedBytes).toBeLessThanOrEqual(STREAM_LIMIT);
    expect(flood.produced).toBeLessThan(64 * 1024 * 1024);
    await eventually(() => t.cp.tunnels.bufferedBytes === 0, 'the backlog to be released');

    // Reading now: what was buffered arrives, then the reason.
    let got = 0;
    const err = await failure(
      (async () => {
        for await (const chunk of stream) got += chunk.length;
      })(),
    );
    expect(got).toBeGreaterThan(0);
    expect(got).toBeLessThan(flood.produced);
    expect(err.reason).toBe('TooManyRequests');
    expect(err.message).toContain('was stopped because it was not read fast enough');
  });
});

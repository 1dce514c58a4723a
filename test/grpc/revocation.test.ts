/**
 * Revocation reaches what is already open, over real TLS: a watch or a followed log opened
 * with a token ends when the token is deleted (through the Tokens service, as `kubelab token
 * delete` does); a node's watch and agent tunnel end when its Node is deleted; and a replica
 * sharing the data folder (etcd store) refuses a token deleted through another within seconds,
 * ending its own streams opened with it.
 */
import * as grpc from '@grpc/grpc-js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../client/api/errors.js';
import type { Node, Pod } from '../../client/api/types.js';
import type { Client } from '../../client/client.js';
import { joinCluster, TokensClient } from '../../client/grpc/cluster.js';
import { quietLogger } from '../../agent/logger.js';
import type { LogRequest, LogSource } from '../../agent/runtime/types.js';
import { AgentTunnelClient } from '../../agent/tunnel.js';
import { TunnelDown, TunnelUp } from '../../proto/gen/kubelab/v1/tunnel.js';
import { startTestControlPlane, type TestControlPlane } from '../support/controlplane.js';
import { startEtcd, type EtcdServer } from '../support/etcd.js';
import { eventually } from '../support/wait.js';

/** How a stream ended: the error it ended with, or "ended" for a normal end. */
async function endOf(stream: AsyncIterable<unknown>): Promise<ApiError | 'ended'> {
  try {
    for await (const _ of stream) void _;
    return 'ended';
  } catch (err) {
    expect(err, String(err)).toBeInstanceOf(ApiError);
    return err as ApiError;
  }
}

/** Fails with `what` if `p` has not settled within `ms` (a stream that never ends). */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} within ${ms / 1000} s`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/** One line, then waits until the control plane cancels the stream (a quiet `logs -f`). */
class FollowSource implements LogSource {
  signal: AbortSignal | undefined;

  async stream(_req: LogRequest, write: (chunk: Buffer) => boolean, signal: AbortSignal): Promise<void> {
    this.signal = signal;
    write(Buffer.from('started\n'));
    if (signal.aborted) return;
    await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
  }
}

const nodeObject = (name: string): Node => ({ apiVersion: 'v1', kind: 'Node', metadata: { name } });

describe('on one control plane', () => {
  let t: TestControlPlane;
  let server: string;
  let tokens: TokensClient;
  let admin: Client;
  const agents: AgentTunnelClient[] = [];

  beforeAll(async () => {
    t = await startTestControlPlane({ controllers: false });
    server = `127.0.0.1:${t.cp.port}`;
    tokens = new TokensClient({ server, token: t.cp.adminToken, caPem: t.caPem });
    admin = t.client();
  });
  afterAll(async () => {
    for (const a of agents) await a.stop();
    tokens.close();
    await t.close();
  });

  const clientWith = (token: string) => t.client({ token, retry: { attempts: 1 } });

  it('a deleted token ends the watches opened with it, and only those', async () => {
    const housemate = await tokens.create({ role: 'viewer', name: 'housemate' });
    const viewer = clientWith(housemate.token!);
    const doomed = await viewer.watch('Namespace');
    const ended = endOf(doomed);
    const adminWatch = await admin.watch('Namespace', {
      resourceVersion: (await admin.list('Namespace')).resourceVersion,
    });

    await tokens.delete(housemate.id);

    const err = await within(ended, 10_000, 'the watch opened with the deleted token did not end');
    expect(err).not.toBe('ended');
    expect((err as ApiError).code).toBe(grpc.status.UNAUTHENTICATED);
    expect((err as ApiError).message).toContain(`token ${housemate.id} was deleted, which ended this watch`);
    await expect(viewer.list('Namespace')).rejects.toMatchObject({ code: grpc.status.UNAUTHENTICATED });
    // The admin's watch, opened with another token, goes on.
    await admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'after-revocation' } });
    const next = await adminWatch[Symbol.asyncIterator]().next();
    expect(next.value?.object.metadata?.name).toBe('after-revocation');
    adminWatch.stop();
  });

  it('a deleted token ends a followed log, and the agent stops reading it', async () => {
    const source = new FollowSource();
    const { token: joinToken } = await tokens.create();
    const node = await joinCluster(server, joinToken!, 'logs-node', { nodePassword: 'p'.repeat(43) });
    const agent = new AgentTunnelClient({
      servers: [server],
      token: node.token,
      caPem: node.caPem,
      nodeName: 'logs-node',
      source,
      logger: quietLogger(),
      backoff: { initialMs: 50, maxMs: 200 },
    });
    agents.push(agent);
    agent.start();
    await eventually(() => t.cp.tunnels.connected('logs-node') && agent.connected, 'the tunnel');
    const pod: Pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'followed', namespace: 'default' },
      spec: { nodeName: 'logs-node', containers: [{ name: 'app', command: ['sleep', '1000'] }] },
    };
    await admin.create(pod);

    const housemate = await tokens.create({ role: 'viewer', name: 'log-reader' });
    const stream = await clientWith(housemate.token!).logs('default', 'followed', { follow: true });
    const it = stream[Symbol.asyncIterator]();
    expect((await it.next()).value?.toString()).toBe('started\n');
    const ended = endOf({ [Symbol.asyncIterator]: () => it });

    await tokens.delete(housemate.id);

    const err = await within(ended, 10_000, 'the log stream opened with the deleted token did not end');
    expect((err as ApiError).code).toBe(grpc.status.UNAUTHENTICATED);
    expect((err as ApiError).message).toContain('was deleted, which ended this log stream');
    await eventually(() => source.signal?.aborted === true, 'the agent to stop reading the log', 10_000);
  });

  it('deleting a Node ends the watch and the agent tunnel its credential opened', async () => {
    const { token: joinToken } = await tokens.create();
    const node = await joinCluster(server, joinToken!, 'pi-gone', { nodePassword: 'q'.repeat(43) });
    const asNode = clientWith(node.token);
    await asNode.create(nodeObject('pi-gone'));
    const podsOfNode = await asNode.watch('Pod', { fieldSelector: 'spec.nodeName=pi-gone' });
    const watchEnded = endOf(podsOfNode);

    const raw = new grpc.Client(server, grpc.credentials.createSsl(Buffer.from(t.caPem)), {
      'grpc.ssl_target_name_override': 'localhost',
    });
    try {
      const md = new grpc.Metadata();
      md.set('authorization', `Bearer ${node.token}`);
      const tunnel = raw.makeBidiStreamRequest(
        '/kubelab.v1.AgentTunnel/Connect',
        (m: TunnelUp) => Buffer.from(TunnelUp.encode(m).finish()),
        (b: Buffer) => TunnelDown.decode(b),
        md,
      );
      const live = new Promise<void>((resolve) => tunnel.once('metadata', () => resolve()));
      const tunnelEnded = new Promise<grpc.ServiceError>((resolve) => tunnel.on('error', resolve));
      tunnel.on('data', () => undefined);
      tunnel.write({ hello: { nodeName: 'pi-gone' } });
      await live;

      await admin.delete('Node', 'pi-gone');

      const tunnelErr = await within(tunnelEnded, 10_000, "the deleted node's tunnel did not end");
      expect(tunnelErr.code).toBe(grpc.status.UNAUTHENTICATED);
      expect(tunnelErr.details).toContain('the credential of node pi-gone was revoked');
      expect(tunnelErr.details).toContain('ended this agent tunnel');
      const watchErr = await within(watchEnded, 10_000, "the deleted node's watch did not end");
      expect((watchErr as ApiError).code).toBe(grpc.status.UNAUTHENTICATED);
      expect((watchErr as ApiError).message).toContain('the credential of node pi-gone was revoked');
      expect(t.cp.tunnels.connected('pi-gone')).toBe(false);
    } finally {
      raw.close();
    }
  });
});

describe('replicas sharing a data folder', () => {
  let etcd: EtcdServer;
  let dataDir: string;
  const replicas: TestControlPlane[] = [];

  beforeAll(async () => {
    etcd = await startEtcd();
    dataDir = mkdtempSync(join(tmpdir(), 'kubelab-replicas-'));
    for (let i = 0; i < 2; i++) {
      replicas.push(
        await startTestControlPlane({
          dataDir,
          store: 'etcd',
          etcdEndpoints: [etcd.endpoint],
          etcdPrefix: '/revocation',
          controllers: false,
        }),
      );
    }
  });
  afterAll(async () => {
    for (const r of replicas) await r.close();
    await etcd?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('a token deleted through one replica is refused by the other within seconds, and its watch there ends', async () => {
    const [first, second] = replicas;
    const tokens = new TokensClient({
      server: `127.0.0.1:${first.cp.port}`,
      token: first.cp.adminToken,
      caPem: first.caPem,
    });
    try {
      const housemate = await tokens.create({ role: 'viewer', name: 'housemate' });
      const onSecond = second.client({ token: housemate.token!, retry: { attempts: 1 } });
      // The second replica has verified the token (and remembers it) and serves a watch with it.
      expect((await onSecond.list('Namespace')).items.length).toBeGreaterThan(0);
      const ended = endOf(await onSecond.watch('Namespace'));

      await tokens.delete(housemate.id);

      const err = await within(ended, 10_000, "the other replica's watch with the deleted token did not end");
      expect((err as ApiError).code).toBe(grpc.status.UNAUTHENTICATED);
      expect((err as ApiError).message).toContain(`token ${housemate.id} was deleted`);
      await expect(onSecond.list('Namespace')).rejects.toMatchObject({ code: grpc.status.UNAUTHENTICATED });
    } finally {
      tokens.close();
    }
  });
});

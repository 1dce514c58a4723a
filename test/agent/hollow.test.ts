/**
 * Hollow mode: many simulated nodes in one process, each running the agent's real code paths,
 * with readings a test controls; and an agent failing over between control-plane replicas.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Node } from '../../client/api/types.js';
import { joinCluster, TokensClient } from '../../client/grpc/cluster.js';
import { failoverClient } from '../../client/grpc/transport.js';
import { NodeAgent } from '../../agent/agent.js';
import {
  defaultConfig,
  parseEvictionHard,
  parseLabels,
  parseResourceList,
  parseTaints,
} from '../../agent/config.js';
import { credentialsPath } from '../../agent/credentials.js';
import { HollowFleet } from '../../agent/hollow.js';
import { quietLogger } from '../../agent/logger.js';
import { HollowMachineReader } from '../../agent/machine/hollow.js';
import { startTestControlPlane } from '../support/controlplane.js';
import { startEtcd } from '../support/etcd.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function tempDir(prefix: string): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  cleanups.push(() => rmSync(d, { recursive: true, force: true }));
  return d;
}

async function eventually<T>(
  get: () => Promise<T>,
  ok: (v: T) => boolean,
  what: string,
  ms = 20_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await get().catch(() => undefined);
    if (v !== undefined && ok(v)) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const status = (n: Node, type: string) => n.status?.conditions?.find((c) => c.type === type)?.status;
const fast = (name: string) => ({
  ...defaultConfig(name),
  statusUpdateMs: 200,
  leaseRenewMs: 500,
  metricsMs: 500,
});

describe('hollow mode', () => {
  it('runs many nodes in one process, each registered, Ready and heartbeating, with readings a test controls', async () => {
    const t = await startTestControlPlane();
    cleanups.push(() => t.close());
    const server = `https://127.0.0.1:${t.cp.port}`;
    const tokens = new TokensClient({ server, token: t.cp.adminToken, caPem: t.caPem });
    cleanups.push(() => tokens.close());
    const dataDir = tempDir('kubelab-hollow-');
    const fleet = new HollowFleet({
      count: 25,
      prefix: 'sim',
      servers: [server],
      dataDir,
      joinToken: (await tokens.create()).token!,
      config: fast,
      logger: quietLogger(),
      spreadMs: 200,
    });
    cleanups.push(() => fleet.stop());
    await fleet.start();
    const admin = t.client();
    await eventually(
      () => admin.list('Node'),
      (l) => l.items.length === 25 && l.items.every((n) => status(n, 'Ready') === 'True'),
      'every hollow node to be Ready',
    );
    await eventually(
      () => admin.list('Lease', { namespace: 'kube-node-lease' }),
      (l) => l.items.length === 25,
      'every lease',
    );
    const names = (await admin.list('Node')).items.map((n) => n.metadata?.name);
    expect(names).toContain('sim-0');
    expect(names).toContain('sim-24');
    const node7 = await admin.get('Node', 'sim-7');
    expect(node7.status?.nodeInfo?.machineID).not.toBe(
      (await admin.get('Node', 'sim-8')).status?.nodeInfo?.machineID,
    );

    // Push one node into memory pressure: only it reports MemoryPressure.
    fleet.node('sim-3').reader.set({ memoryAvailableBytes: 10 * 1024 * 1024 });
    await eventually(
      () => admin.get('Node', 'sim-3'),
      (n) => status(n, 'MemoryPressure') === 'True',
      'sim-3 under memory pressure',
    );
    expect(status(await admin.get('Node', 'sim-4'), 'MemoryPressure')).toBe('False');

    // Credentials are kept (0600), so the fleet restarts without a token.
    expect(statSync(credentialsPath(dataDir, 'sim-0')).mode & 0o777).toBe(0o600);
    await fleet.stop();
    const again = new HollowFleet({
      count: 3,
      prefix: 'sim',
      servers: [server],
      dataDir,
      config: fast,
      logger: quietLogger(),
      spreadMs: 0,
    });
    cleanups.push(() => again.stop());
    await again.start();
    const before = (await admin.get('Lease', 'sim-1', { namespace: 'kube-node-lease' })).spec?.renewTime;
    await eventually(
      () => admin.get('Lease', 'sim-1', { namespace: 'kube-node-lease' }),
      (l) => l.spec?.renewTime !== before,
      'the restarted node to renew',
    );
  }, 60_000);
});

describe('hollow pods across a fleet restart', () => {
  it('a restarted fleet adopts the containers its pods ran, rather than starting them again', async () => {
    const t = await startTestControlPlane({ controllers: false });
    cleanups.push(() => t.close());
    const server = `https://127.0.0.1:${t.cp.port}`;
    const tokens = new TokensClient({ server, token: t.cp.adminToken, caPem: t.caPem });
    cleanups.push(() => tokens.close());
    const dataDir = tempDir('kubelab-hollow-pods-');
    const joinToken = (await tokens.create()).token!;
    const fleetOf = () =>
      new HollowFleet({
        count: 2,
        prefix: 'keep',
        servers: [server],
        dataDir,
        joinToken,
        config: fast,
        logger: quietLogger(),
        spreadMs: 0,
      });
    const first = fleetOf();
    cleanups.push(() => first.stop());
    await first.start();
    const admin = t.client();
    for (const [name, node] of [
      ['web', 'keep-0'],
      ['db', 'keep-1'],
    ])
      await admin.create({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, namespace: 'default' },
        spec: { nodeName: node, containers: [{ name: 'main', command: ['serve'] }] },
      });
    const running = () =>
      eventually(
        () => admin.list('Pod', { namespace: 'default' }),
        (l) => l.items.length === 2 && l.items.every((p) => p.status?.containerStatuses?.[0]?.state?.running),
        'both pods Running',
      );
    const startedAt = (l: Awaited<ReturnType<typeof running>>) =>
      Object.fromEntries(
        l.items.map((p) => [p.metadata!.name, p.status!.containerStatuses![0].state!.running!.startedAt]),
      );
    const before = startedAt(await running());
    await first.stop();

    const second = fleetOf();
    cleanups.push(() => second.stop());
    await second.start();
    // The restarted agents have looked at their pods once their status manager reports again.
    await eventually(
      () => admin.list('Node'),
      (l) =>
        l.items.every((n) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')),
      'both nodes Ready again',
    );
    await new Promise((r) => setTimeout(r, 1_500));
    const after = await running();
    expect(startedAt(after)).toEqual(before);
    expect(after.items.map((p) => p.status?.containerStatuses?.[0]?.restartCount)).toEqual([0, 0]);
  }, 60_000);
});

describe('agent resilience', () => {
  it('fails over to another control-plane replica when the one it uses goes away', async () => {
    const etcd = await startEtcd();
    cleanups.push(() => etcd.stop());
    // Replicas share the data folder's CA and tokens (or copies of them).
    const dataDir = tempDir('kubelab-replicas-');
    const store = {
      store: 'etcd' as const,
      etcdEndpoints: [etcd.endpoint],
      etcdPrefix: '/ha',
      dataDir,
      controllers: false as const,
    };
    const a = await startTestControlPlane(store);
    let aStopped = false;
    cleanups.push(() => (aStopped ? undefined : a.close()));
    const tokens = new TokensClient({
      server: `127.0.0.1:${a.cp.port}`,
      token: a.cp.adminToken,
      caPem: a.caPem,
    });
    const joined = await joinCluster(`127.0.0.1:${a.cp.port}`, (await tokens.create()).token!, 'ha-1');
    tokens.close();
    const b = await startTestControlPlane(store);
    cleanups.push(() => b.close());

    const client = failoverClient([`127.0.0.1:${a.cp.port}`, `127.0.0.1:${b.cp.port}`], {
      token: joined.token,
      caPem: joined.caPem,
      retry: { attempts: 1 },
    });
    cleanups.push(() => client.close());
    const agent = new NodeAgent({
      client,
      reader: new HollowMachineReader({ name: 'ha-1', index: 1 }),
      config: fast('ha-1'),
      logger: quietLogger(),
    });
    cleanups.push(() => agent.stop());
    agent.start();
    const admin = b.client();
    await eventually(
      () => admin.get('Node', 'ha-1'),
      (n) => status(n, 'Ready') === 'True',
      'registration through the first replica',
    );
    // The lease loop runs beside the status loop: its first heartbeat may come a moment later.
    await eventually(
      () => admin.get('Lease', 'ha-1', { namespace: 'kube-node-lease' }),
      (l) => !!l.spec?.renewTime,
      'the first heartbeat through the first replica',
    );

    await a.close();
    aStopped = true;
    const renewed = (await admin.get('Lease', 'ha-1', { namespace: 'kube-node-lease' })).spec?.renewTime;
    await eventually(
      () => admin.get('Lease', 'ha-1', { namespace: 'kube-node-lease' }),
      (l) => l.spec?.renewTime !== renewed,
      'heartbeats through the second replica',
    );
  }, 60_000);
});

describe('agent flags', () => {
  it('parse Kubernetes formats and name the flag on a mistake', () => {
    expect(parseEvictionHard('memory.available<500Mi,nodefs.available<15%,pid.available<2000')).toEqual({
      'memory.available': { value: 500 * 1024 * 1024 },
      'nodefs.available': { percent: 15 },
      'pid.available': { value: 2000 },
    });
    expect(() => parseEvictionHard('memory.free<1Gi')).toThrow(/--eviction-hard "memory.free<1Gi"/);
    expect(() => parseEvictionHard('memory.available<lots')).toThrow(/neither a quantity/);
    expect(parseTaints('dedicated=gpu:NoSchedule,maintenance:NoExecute')).toEqual([
      { key: 'dedicated', value: 'gpu', effect: 'NoSchedule' },
      { key: 'maintenance', effect: 'NoExecute' },
    ]);
    expect(() => parseTaints('dedicated=gpu')).toThrow(/--register-with-taints/);
    expect(parseLabels('rack=3,zone=attic')).toEqual({ rack: '3', zone: 'attic' });
    expect(() => parseLabels('rack')).toThrow(/--node-labels "rack" must be key=value/);
    expect(parseResourceList('cpu=500m,memory=1Gi', '--system-reserved')).toEqual({
      cpu: '500m',
      memory: '1Gi',
    });
    expect(() => parseResourceList('gpu=1', '--system-reserved')).toThrow(/--system-reserved "gpu=1"/);
  });
});

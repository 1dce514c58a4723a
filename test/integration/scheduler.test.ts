/**
 * The scheduler inside a real control plane, with hollow nodes: many pods with requests,
 * selectors, affinity and tolerations land where they may and never overcommit a node; a pod
 * that fits nowhere says why, and is placed within seconds once a node it fits joins.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { defaultConfig } from '../../agent/config.js';
import { HollowFleet } from '../../agent/hollow.js';
import { quietLogger } from '../../agent/logger.js';
import { parseQuantity } from '../../client/api/quantity.js';
import type { Node, Pod } from '../../client/api/types.js';
import type { Client } from '../../client/client.js';
import { TokensClient } from '../../client/grpc/cluster.js';
import { startTestControlPlane, type TestControlPlane } from '../support/controlplane.js';
import { eventually } from '../support/wait.js';

let t: TestControlPlane;
let admin: Client;
let dir: string;
let token: string;
const fleets: HollowFleet[] = [];

const SSD = ['sim-0', 'sim-1', 'sim-2', 'sim-3', 'sim-4'];
const GPU = ['sim-15', 'sim-16', 'sim-17', 'sim-18', 'sim-19'];

async function startFleet(
  prefix: string,
  count: number,
  labels: (name: string) => Record<string, string>,
): Promise<void> {
  const fleet = new HollowFleet({
    count,
    prefix,
    servers: [`https://127.0.0.1:${t.cp.port}`],
    dataDir: join(dir, prefix),
    joinToken: token,
    config: (name) => ({
      ...defaultConfig(name),
      labels: labels(name),
      taints: GPU.includes(name) ? [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }] : [],
    }),
    logger: quietLogger(),
    spreadMs: 100,
  });
  fleets.push(fleet);
  await fleet.start();
}

beforeAll(async () => {
  t = await startTestControlPlane();
  admin = t.client();
  dir = mkdtempSync(join(tmpdir(), 'kubelab-sched-'));
  const tokens = new TokensClient({
    server: `127.0.0.1:${t.cp.port}`,
    token: t.cp.adminToken,
    caPem: t.caPem,
  });
  token = (await tokens.create()).token!;
  tokens.close();
  await startFleet('sim', 20, (name): Record<string, string> => (SSD.includes(name) ? { disk: 'ssd' } : {}));
  await eventually(
    async () =>
      (await admin.list('Node')).items.filter((n) =>
        n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
      ).length === 20,
    'the hollow nodes to be Ready',
  );
}, 60_000);

afterAll(async () => {
  for (const f of fleets) await f.stop();
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

function pod(name: string, cpu: string, memory: string, spec: Partial<NonNullable<Pod['spec']>> = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', labels: { group: name.replace(/-\d+$/, '') } },
    spec: { containers: [{ name: 'c', image: 'app', resources: { requests: { cpu, memory } } }], ...spec },
  };
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i);
const pods = async () => (await admin.list('Pod', { namespace: 'default' })).items;

async function createAll(list: Pod[]): Promise<void> {
  for (let i = 0; i < list.length; i += 50)
    await Promise.all(list.slice(i, i + 50).map((p) => admin.create(p)));
}

it('places 500 pods on 20 hollow nodes without overcommitting any, honouring selectors, affinity and taints', async () => {
  await createAll([
    ...range(40).map((i) => pod(`ssd-${i}`, '10m', '16Mi', { nodeSelector: { disk: 'ssd' } })),
    ...range(30).map((i) =>
      pod(`gpu-${i}`, '500m', '256Mi', {
        tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' }],
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [
                { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: GPU }] },
              ],
            },
          },
        },
      }),
    ),
    ...range(10).map((i) =>
      pod(`pinned-${i}`, '10m', '16Mi', {
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [
                { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['sim-7'] }] },
              ],
            },
          },
        },
      }),
    ),
  ]);
  await eventually(
    async () => (await pods()).every((p) => p.spec?.nodeName),
    'the constrained pods to be placed',
  );

  // More cpu than the 15 untainted nodes have: some must stay Pending.
  await createAll(range(420).map((i) => pod(`web-${i}`, '150m', '128Mi')));
  await eventually(async () => {
    const all = await pods();
    const pending = all.filter((p) => !p.spec?.nodeName);
    return (
      all.length === 500 &&
      pending.length > 0 &&
      pending.every((p) =>
        p.status?.conditions?.some((c) => c.type === 'PodScheduled' && c.status === 'False'),
      )
    );
  }, 'every pod to be placed or to say why not');
  const all = await pods();
  const nodes = new Map((await admin.list('Node')).items.map((n) => [n.metadata!.name!, n]));

  for (const [name, node] of nodes) {
    const on = all.filter((p) => p.spec?.nodeName === name);
    const sum = (r: 'cpu' | 'memory') =>
      on.reduce((s, p) => s + parseQuantity(p.spec!.containers![0].resources!.requests![r]).milliValue(), 0);
    const allocatable = (r: string) => parseQuantity((node as Node).status!.allocatable![r]).milliValue();
    expect(sum('cpu'), `cpu on ${name}`).toBeLessThanOrEqual(allocatable('cpu'));
    expect(sum('memory'), `memory on ${name}`).toBeLessThanOrEqual(allocatable('memory'));
    expect(on.length).toBeLessThanOrEqual(Number(node.status!.allocatable!.pods));
  }
  const group = (g: string) => all.filter((p) => p.metadata!.labels!.group === g);
  expect(group('ssd').every((p) => SSD.includes(p.spec!.nodeName!))).toBe(true);
  expect(group('gpu').every((p) => GPU.includes(p.spec!.nodeName!))).toBe(true);
  expect(group('pinned').every((p) => p.spec!.nodeName === 'sim-7')).toBe(true);
  expect(group('web').every((p) => !p.spec?.nodeName || !GPU.includes(p.spec.nodeName))).toBe(true);
  // Spread rather than piled up: every untainted node took some.
  for (const name of nodes.keys()) {
    if (!GPU.includes(name)) expect(group('web').some((p) => p.spec?.nodeName === name)).toBe(true);
  }
  const bound = all.find((p) => p.metadata!.name === 'web-0')!;
  expect(bound.status?.conditions).toContainEqual(
    expect.objectContaining({ type: 'PodScheduled', status: 'True' }),
  );

  const pending = group('web').filter((p) => !p.spec?.nodeName);
  expect(pending.length).toBeGreaterThan(0);
  const why = pending[0].status!.conditions!.find((c) => c.type === 'PodScheduled')!;
  expect(why.reason).toBe('Unschedulable');
  expect(why.message).toMatch(
    /^0\/20 nodes are available: .*15 Insufficient cpu.*5 node\(s\) had untolerated taint \{dedicated: gpu\}\.$/,
  );
  // Events are written in the background.
  await eventually(
    async () =>
      (await admin.list('Event', { namespace: 'default' })).items.some(
        (e) => e.reason === 'FailedScheduling' && e.involvedObject?.name === pending[0].metadata!.name,
      ),
    'the FailedScheduling event',
  );
  const events = (await admin.list('Event', { namespace: 'default' })).items;
  expect(events).toContainEqual(
    expect.objectContaining({
      reason: 'Scheduled',
      message: expect.stringMatching(/^Successfully assigned default\/ssd-0 to sim-[0-4]$/),
    }),
  );
}, 120_000);

it('says why a pod fits nowhere, then places it within seconds when a fitting node joins', async () => {
  await admin.create(pod('late', '100m', '64Mi', { nodeSelector: { pool: 'late' } }));
  await eventually(async () => {
    const p = await admin.get('Pod', 'late', { namespace: 'default' });
    return p.status?.conditions?.some((c) => c.type === 'PodScheduled' && c.status === 'False') ?? false;
  }, 'the pod to be reported unschedulable');
  const message = (await admin.get('Pod', 'late', { namespace: 'default' })).status!.conditions!.find(
    (c) => c.type === 'PodScheduled',
  )!.message;
  expect(message).toBe(
    "0/20 nodes are available: 15 node(s) didn't match Pod's node affinity/selector, 5 node(s) had untolerated taint {dedicated: gpu}.",
  );

  await startFleet('late', 1, () => ({ pool: 'late' }));
  const joined = Date.now();
  await eventually(
    async () => (await admin.get('Pod', 'late', { namespace: 'default' })).spec?.nodeName === 'late-0',
    'the pod to be placed',
  );
  expect(Date.now() - joined).toBeLessThan(10_000);
}, 60_000);

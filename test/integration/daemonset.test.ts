/**
 * The DaemonSet controller inside a real control plane, with the real scheduler and hollow
 * nodes that run their pods: one pod per eligible node, a joining node gets one, taints and
 * labels add or remove pods as Kubernetes does, a rolling update replaces every pod within
 * maxUnavailable, and deleting the DaemonSet removes its pods.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { defaultConfig } from '../../agent/config.js';
import { HollowFleet } from '../../agent/hollow.js';
import { quietLogger } from '../../agent/logger.js';
import { isPodReady } from '../../client/api/pods.js';
import type { DaemonSet, Pod, Taint } from '../../client/api/types.js';
import type { Client } from '../../client/client.js';
import { retryOnConflict } from '../../client/util/retryonconflict.js';
import { createJoinToken } from '../support/agentproc.js';
import { startTestControlPlane, type TestControlPlane } from '../support/controlplane.js';
import { eventually } from '../support/wait.js';
import { templateOf } from '../../main/controllers/daemonset/history.js';

let t: TestControlPlane;
let admin: Client;
let dir: string;
let token: string;
const fleets: HollowFleet[] = [];

async function startFleet(prefix: string, count: number, labels: Record<string, string> = {}): Promise<void> {
  const fleet = new HollowFleet({
    count,
    prefix,
    servers: [`https://127.0.0.1:${t.cp.port}`],
    dataDir: join(dir, prefix),
    joinToken: token,
    config: (name) => ({ ...defaultConfig(name), labels }),
    logger: quietLogger(),
    spreadMs: 50,
  });
  fleets.push(fleet);
  await fleet.start();
}

const readyNodes = async () =>
  (await admin.list('Node')).items.filter((n) =>
    n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
  ).length;

beforeAll(async () => {
  t = await startTestControlPlane();
  admin = t.client();
  dir = mkdtempSync(join(tmpdir(), 'kubelab-ds-'));
  token = await createJoinToken(t);
  await startFleet('ds', 4, { disk: 'ssd' });
  await eventually(async () => (await readyNodes()) === 4, 'the hollow nodes to be Ready');
}, 60_000);

afterAll(async () => {
  for (const f of fleets) await f.stop();
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

function daemonSet(name: string, spec: Partial<NonNullable<DaemonSet['spec']>> = {}): DaemonSet {
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name, namespace: 'default' },
    spec: {
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'agent', image: 'exporter:1' }] },
      },
      ...spec,
    },
  };
}

/** Live (not being deleted) pods of the DaemonSet, by node. */
async function podsByNode(name: string): Promise<Map<string, Pod[]>> {
  const pods = (await admin.list('Pod', { namespace: 'default', labelSelector: `app=${name}` })).items;
  const byNode = new Map<string, Pod[]>();
  for (const p of pods) {
    if (p.metadata?.deletionTimestamp) continue;
    const node = p.spec?.nodeName ?? '(unscheduled)';
    byNode.set(node, [...(byNode.get(node) ?? []), p]);
  }
  return byNode;
}

async function onePerNode(name: string, nodes: string[]): Promise<boolean> {
  const byNode = await podsByNode(name);
  return (
    byNode.size === nodes.length &&
    nodes.every((n) => byNode.get(n)?.length === 1 && byNode.get(n)![0].status?.phase === 'Running')
  );
}

const nodeNames = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);
const status = async (name: string) => (await admin.get('DaemonSet', name, { namespace: 'default' })).status;

async function setTaints(node: string, taints: Taint[]): Promise<void> {
  await admin.patch('Node', node, { spec: { taints } });
}

it('runs exactly one pod per eligible node, and one on a node that joins', async () => {
  await admin.create(daemonSet('exporter'));
  await eventually(() => onePerNode('exporter', nodeNames('ds', 4)), 'one Running pod per node');
  await eventually(async () => (await status('exporter'))?.numberAvailable === 4, 'status to count them');
  const st = (await status('exporter'))!;
  expect(st).toMatchObject({
    desiredNumberScheduled: 4,
    currentNumberScheduled: 4,
    numberMisscheduled: 0,
    numberReady: 4,
    updatedNumberScheduled: 4,
    numberAvailable: 4,
    numberUnavailable: 0,
    observedGeneration: 1,
  });
  const pod = [...(await podsByNode('exporter')).values()][0][0];
  expect(pod.metadata?.ownerReferences?.[0]).toMatchObject({
    kind: 'DaemonSet',
    name: 'exporter',
    controller: true,
  });
  expect(pod.metadata?.labels?.['controller-revision-hash']).toBeTruthy();
  const revisions = (await admin.list('ControllerRevision', { namespace: 'default' })).items;
  expect(revisions.map((r) => r.metadata?.name)).toEqual([
    `exporter-${pod.metadata?.labels?.['controller-revision-hash']}`,
  ]);

  await startFleet('late', 1);
  await eventually(
    () => onePerNode('exporter', [...nodeNames('ds', 4), 'late-0']),
    'a pod on the node that joined',
  );
}, 60_000);

it('keeps a pod on a NoSchedule-tainted node, removes it for an untolerated NoExecute taint', async () => {
  await setTaints('ds-1', [{ key: 'maintenance', value: 'soon', effect: 'NoSchedule' }]);
  // Give the controller a chance to act wrongly.
  await new Promise((r) => setTimeout(r, 1_000));
  expect((await podsByNode('exporter')).get('ds-1')?.length).toBe(1);

  await setTaints('ds-1', [{ key: 'maintenance', value: 'now', effect: 'NoExecute' }]);
  await eventually(async () => !(await podsByNode('exporter')).has('ds-1'), 'the pod to leave ds-1');
  await eventually(async () => (await status('exporter'))?.desiredNumberScheduled === 4, 'desired to drop');

  await setTaints('ds-1', []);
  await eventually(
    () => onePerNode('exporter', [...nodeNames('ds', 4), 'late-0']),
    'the pod back on ds-1 once the taint is gone',
  );
}, 60_000);

it('follows node labels: a labelled node gets a pod, an unlabelled one loses it', async () => {
  await admin.create(
    daemonSet('ssd-only', {
      template: {
        metadata: { labels: { app: 'ssd-only' } },
        spec: { nodeSelector: { disk: 'ssd' }, containers: [{ name: 'c', image: 'fio:1' }] },
      },
    }),
  );
  await eventually(() => onePerNode('ssd-only', nodeNames('ds', 4)), 'pods on the four ssd nodes');
  await admin.patch('Node', 'late-0', { metadata: { labels: { disk: 'ssd' } } });
  await eventually(
    () => onePerNode('ssd-only', [...nodeNames('ds', 4), 'late-0']),
    'a pod on the relabelled node',
  );
  await admin.patch('Node', 'ds-0', { metadata: { labels: { disk: null } } });
  await eventually(
    () => onePerNode('ssd-only', ['ds-1', 'ds-2', 'ds-3', 'late-0']),
    'the pod to leave the unlabelled node',
  );
}, 60_000);

it('rolls a template change out within maxUnavailable, then deleting the DaemonSet removes its pods', async () => {
  const nodes = [...nodeNames('ds', 4), 'late-0'];
  const oldHash = [...(await podsByNode('exporter')).values()][0][0].metadata?.labels?.[
    'controller-revision-hash'
  ];
  // The controller writes the DaemonSet's status meanwhile: a user's update that loses the race is sent again.
  await retryOnConflict(5, async () => {
    const before = await admin.get('DaemonSet', 'exporter', { namespace: 'default' });
    await admin.update<DaemonSet>({
      ...before,
      spec: {
        ...before.spec,
        template: {
          ...before.spec!.template,
          spec: { containers: [{ name: 'agent', image: 'exporter:2' }] },
        },
      },
    });
  });
  let worst = 0;
  await eventually(
    async () => {
      const byNode = await podsByNode('exporter');
      const available = nodes.filter((n) => byNode.get(n)?.some((p) => isPodReady(p))).length;
      worst = Math.max(worst, nodes.length - available);
      const done = nodes.every(
        (n) =>
          byNode.get(n)?.length === 1 &&
          byNode.get(n)![0].spec?.containers?.[0]?.image === 'exporter:2' &&
          isPodReady(byNode.get(n)![0]),
      );
      return done;
    },
    'every pod to run the new template',
    60_000,
    20,
  );
  expect(worst).toBeLessThanOrEqual(1);
  const st = await status('exporter');
  expect(st?.updatedNumberScheduled).toBe(5);
  expect(st?.observedGeneration).toBe(2);
  const revisions = (await admin.list('ControllerRevision', { namespace: 'default' })).items.filter((r) =>
    r.metadata?.name?.startsWith('exporter-'),
  );
  expect(revisions.map((r) => r.revision).sort()).toEqual([1, 2]);
  expect(revisions.some((r) => r.metadata?.name === `exporter-${oldHash}`)).toBe(true);

  // Roll back: apply the old revision's template. No new revision; the old one becomes the newest.
  const oldRevision = revisions.find((r) => r.metadata?.name === `exporter-${oldHash}`)!;
  await retryOnConflict(5, async () => {
    const current = await admin.get('DaemonSet', 'exporter', { namespace: 'default' });
    await admin.update<DaemonSet>({
      ...current,
      spec: { ...current.spec, template: templateOf(oldRevision) },
    });
  });
  await eventually(
    async () => {
      const byNode = await podsByNode('exporter');
      return nodes.every((n) => {
        const p = byNode.get(n);
        return (
          p?.length === 1 &&
          p[0].metadata?.labels?.['controller-revision-hash'] === oldHash &&
          isPodReady(p[0])
        );
      });
    },
    'every pod back on the old template',
    60_000,
  );
  const afterRollback = (await admin.list('ControllerRevision', { namespace: 'default' })).items.filter((r) =>
    r.metadata?.name?.startsWith('exporter-'),
  );
  expect(afterRollback).toHaveLength(2);
  expect(afterRollback.find((r) => r.metadata?.name === `exporter-${oldHash}`)?.revision).toBe(3);

  await admin.delete('DaemonSet', 'exporter', { namespace: 'default' });
  await eventually(async () => (await podsByNode('exporter')).size === 0, 'the pods to be deleted');
  await eventually(
    async () =>
      !(await admin.list('ControllerRevision', { namespace: 'default' })).items.some((r) =>
        r.metadata?.name?.startsWith('exporter-'),
      ),
    'the revisions to be deleted',
  );
}, 90_000);

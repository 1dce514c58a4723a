/**
 * Deployments and ReplicaSets inside a real control plane, with the real scheduler and hollow
 * nodes that run their pods: a Deployment brings up its pods through a ReplicaSet, a rolling
 * update stays within maxSurge and maxUnavailable at every watch event, a rollback brings the
 * old template's ReplicaSet back, a Recreate rollout has no overlap, the pods of a node that
 * dies come back elsewhere after the taint eviction, and deleting cascades to every pod.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { defaultConfig } from '../../agent/config.js';
import { HollowFleet } from '../../agent/hollow.js';
import { quietLogger } from '../../agent/logger.js';
import { isPodReady } from '../../client/api/pods.js';
import type { Deployment, Pod, ReplicaSet } from '../../client/api/types.js';
import type { Client } from '../../client/client.js';
import { createJoinToken } from '../support/agentproc.js';
import { startTestControlPlane, type TestControlPlane } from '../support/controlplane.js';
import { eventually } from '../support/wait.js';

const GRACE_MS = 3_000;

let t: TestControlPlane;
let admin: Client;
let dir: string;
let token: string;
const fleets = new Map<string, HollowFleet>();

async function startFleet(prefix: string, count: number): Promise<void> {
  const fleet = new HollowFleet({
    count,
    prefix,
    servers: [`https://127.0.0.1:${t.cp.port}`],
    dataDir: join(dir, prefix),
    joinToken: token,
    config: (name) => ({ ...defaultConfig(name), nodeStatusUpdateFrequencyMs: 1_000 }),
    logger: quietLogger(),
    spreadMs: 50,
  });
  fleets.set(prefix, fleet);
  await fleet.start();
}

const readyNodes = async () =>
  (await admin.list('Node')).items.filter((n) =>
    n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
  ).length;

beforeAll(async () => {
  t = await startTestControlPlane({
    controllerConfig: {
      nodeLifecycle: { monitorPeriodMs: 500, monitorGracePeriodMs: GRACE_MS, startupGracePeriodMs: GRACE_MS },
    },
  });
  admin = t.client();
  dir = mkdtempSync(join(tmpdir(), 'kubelab-deploy-'));
  token = await createJoinToken(t);
  await startFleet('dp', 4);
  await eventually(async () => (await readyNodes()) === 4, 'the hollow nodes to be Ready');
}, 60_000);

afterAll(async () => {
  for (const f of fleets.values()) await f.stop();
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

function deployment(
  name: string,
  spec: Partial<NonNullable<Deployment['spec']>> = {},
  image = 'web:1',
): Deployment {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: 'default' },
    spec: {
      replicas: 4,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'web', image }] },
      },
      ...spec,
    },
  };
}

const get = (name: string) => admin.get('Deployment', name, { namespace: 'default' });

async function livePods(app: string): Promise<Pod[]> {
  return (await admin.list('Pod', { namespace: 'default', labelSelector: `app=${app}` })).items.filter(
    (p) => !p.metadata?.deletionTimestamp,
  );
}

async function replicaSets(app: string): Promise<ReplicaSet[]> {
  return (await admin.list('ReplicaSet', { namespace: 'default', labelSelector: `app=${app}` })).items;
}

/** As kubectl set image: a strategic merge patch, which a concurrent status write cannot conflict with. */
async function setImage(name: string, image: string): Promise<void> {
  const d = await get(name);
  const container = d.spec!.template!.spec!.containers![0].name;
  await admin.patch(
    'Deployment',
    name,
    { spec: { template: { spec: { containers: [{ name: container, image }] } } } },
    { namespace: 'default', type: 'strategic' },
  );
}

/** Every pod ready and running `image`, and the status saying the rollout is done. */
async function rolledOut(name: string, image: string, replicas: number): Promise<boolean> {
  const pods = await livePods(name);
  const d = await get(name);
  const progressing = d.status?.conditions?.find((c) => c.type === 'Progressing');
  return (
    pods.length === replicas &&
    pods.every((p) => p.spec?.containers?.[0]?.image === image && isPodReady(p)) &&
    d.status?.updatedReplicas === replicas &&
    d.status?.availableReplicas === replicas &&
    d.status?.observedGeneration === d.metadata?.generation &&
    progressing?.reason === 'NewReplicaSetAvailable'
  );
}

it('brings up its pods through a ReplicaSet named by the pod-template-hash, and reports', async () => {
  await admin.create(deployment('web'));
  await eventually(() => rolledOut('web', 'web:1', 4), 'four ready pods and a complete rollout');
  const [rs] = await replicaSets('web');
  const hash = rs.metadata?.labels?.['pod-template-hash'];
  expect(rs.metadata?.name).toBe(`web-${hash}`);
  expect(rs.metadata?.ownerReferences?.[0]).toMatchObject({
    kind: 'Deployment',
    name: 'web',
    controller: true,
  });
  expect(rs.metadata?.annotations).toMatchObject({
    'deployment.kubernetes.io/revision': '1',
    'deployment.kubernetes.io/desired-replicas': '4',
    'deployment.kubernetes.io/max-replicas': '5',
  });
  expect(rs.spec?.selector?.matchLabels).toEqual({ app: 'web', 'pod-template-hash': hash });
  const pod = (await livePods('web'))[0];
  expect(pod.metadata?.ownerReferences?.[0]).toMatchObject({ kind: 'ReplicaSet', name: rs.metadata?.name });
  expect(pod.metadata?.name).toMatch(new RegExp(`^web-${hash}-[a-z0-9]{5}$`));
  const d = await get('web');
  expect(d.metadata?.annotations?.['deployment.kubernetes.io/revision']).toBe('1');
  expect(d.status).toMatchObject({ replicas: 4, updatedReplicas: 4, readyReplicas: 4, availableReplicas: 4 });
  const available = d.status?.conditions?.find((c) => c.type === 'Available');
  expect(available).toMatchObject({ status: 'True', reason: 'MinimumReplicasAvailable' });
  const rsStatus = (await replicaSets('web'))[0].status;
  expect(rsStatus).toMatchObject({
    replicas: 4,
    fullyLabeledReplicas: 4,
    readyReplicas: 4,
    availableReplicas: 4,
  });
}, 60_000);

it('rolls an update out within maxSurge and maxUnavailable at every watch event', async () => {
  await admin.patch(
    'Deployment',
    'web',
    { spec: { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 1 } } } },
    { namespace: 'default' },
  );
  // Watch pods and check the bounds on every event: at most 5 live pods, at least 3 ready.
  const live = new Map<string, Pod>();
  let maxLive = 0;
  let minReady = Infinity;
  let events = 0;
  const seen = await admin.list('Pod', { namespace: 'default', labelSelector: 'app=web' });
  for (const p of seen.items) if (!p.metadata?.deletionTimestamp) live.set(p.metadata!.name!, p);
  const watch = await admin.watch('Pod', {
    namespace: 'default',
    labelSelector: 'app=web',
    resourceVersion: seen.resourceVersion,
  });
  const watching = (async () => {
    for await (const ev of watch) {
      const p = ev.object as Pod;
      if (ev.type === 'DELETED' || p.metadata?.deletionTimestamp) live.delete(p.metadata!.name!);
      else live.set(p.metadata!.name!, p);
      events++;
      maxLive = Math.max(maxLive, live.size);
      minReady = Math.min(minReady, [...live.values()].filter(isPodReady).length);
    }
  })().catch(() => undefined);

  await setImage('web', 'web:2');
  await eventually(() => rolledOut('web', 'web:2', 4), 'every pod on web:2', 60_000);
  watch.stop();
  await watching;
  // Four old pods replaced by four new ones: at least a create and a delete each.
  expect(events).toBeGreaterThanOrEqual(16);
  expect(maxLive).toBeLessThanOrEqual(5);
  expect(minReady).toBeGreaterThanOrEqual(3);
  const rss = await replicaSets('web');
  expect(rss).toHaveLength(2);
  const byRevision = Object.fromEntries(
    rss.map((rs) => [rs.metadata?.annotations?.['deployment.kubernetes.io/revision'], rs.spec?.replicas]),
  );
  expect(byRevision).toEqual({ '1': 0, '2': 4 });
  expect((await get('web')).metadata?.annotations?.['deployment.kubernetes.io/revision']).toBe('2');
}, 90_000);

it('a rollback to the old template scales its ReplicaSet back up as the newest revision', async () => {
  const old = (await replicaSets('web')).find(
    (rs) => rs.metadata?.annotations?.['deployment.kubernetes.io/revision'] === '1',
  )!;
  await setImage('web', 'web:1');
  await eventually(() => rolledOut('web', 'web:1', 4), 'every pod back on web:1', 60_000);
  const rss = await replicaSets('web');
  expect(rss).toHaveLength(2);
  const back = rss.find((rs) => rs.metadata?.uid === old.metadata?.uid)!;
  expect(back.spec?.replicas).toBe(4);
  expect(back.metadata?.annotations?.['deployment.kubernetes.io/revision']).toBe('3');
  expect(back.metadata?.annotations?.['deployment.kubernetes.io/revision-history']).toBe('1');
}, 90_000);

it('Recreate stops every old pod before the first new one starts', async () => {
  await admin.create(deployment('batch', { replicas: 3, strategy: { type: 'Recreate' } }));
  await eventually(() => rolledOut('batch', 'web:1', 3), 'three pods');
  let overlap = false;
  const watch = await admin.watch('Pod', { namespace: 'default', labelSelector: 'app=batch' });
  const watching = (async () => {
    const images = new Map<string, string>();
    for await (const ev of watch) {
      const p = ev.object as Pod;
      if (ev.type === 'DELETED') images.delete(p.metadata!.name!);
      else images.set(p.metadata!.name!, p.spec!.containers![0].image!);
      if (new Set(images.values()).size > 1) overlap = true;
    }
  })().catch(() => undefined);
  await setImage('batch', 'web:2');
  await eventually(() => rolledOut('batch', 'web:2', 3), 'three new pods', 60_000);
  watch.stop();
  await watching;
  expect(overlap).toBe(false);
}, 90_000);

it("a dead node's pods come back on other nodes after the taint eviction", async () => {
  await startFleet('doomed', 1);
  await eventually(async () => (await readyNodes()) === 5, 'the fifth node');
  // Pin two pods there first, then let them move: a toleration of 1 s for unreachable.
  await admin.create(
    deployment('ha', {
      replicas: 2,
      template: {
        metadata: { labels: { app: 'ha' } },
        spec: {
          containers: [{ name: 'ha', image: 'ha:1' }],
          tolerations: [
            {
              key: 'node.kubernetes.io/unreachable',
              operator: 'Exists',
              effect: 'NoExecute',
              tolerationSeconds: 1,
            },
            {
              key: 'node.kubernetes.io/not-ready',
              operator: 'Exists',
              effect: 'NoExecute',
              tolerationSeconds: 1,
            },
          ],
        },
      },
    }),
  );
  await eventually(() => rolledOut('ha', 'ha:1', 2), 'two pods');
  // Cordon the others until one pod lands on the doomed node.
  const before = await livePods('ha');
  if (!before.some((p) => p.spec?.nodeName === 'doomed-0')) {
    for (const n of ['dp-0', 'dp-1', 'dp-2', 'dp-3'])
      await admin.patch('Node', n, { spec: { unschedulable: true } });
    await admin.delete('Pod', before[0].metadata!.name!, { namespace: 'default' });
    await eventually(
      async () => (await livePods('ha')).some((p) => p.spec?.nodeName === 'doomed-0' && isPodReady(p)),
      'a pod on the doomed node',
    );
    for (const n of ['dp-0', 'dp-1', 'dp-2', 'dp-3'])
      await admin.patch('Node', n, { spec: { unschedulable: false } });
  }
  await fleets.get('doomed')!.stop();
  await eventually(
    async () => {
      const pods = await livePods('ha');
      return pods.length === 2 && pods.every((p) => p.spec?.nodeName?.startsWith('dp-') && isPodReady(p));
    },
    'both pods running on the live nodes',
    60_000,
  );
}, 120_000);

it('deleting the Deployment removes its ReplicaSets and their pods', async () => {
  await admin.delete('Deployment', 'web', { namespace: 'default' });
  await eventually(async () => (await replicaSets('web')).length === 0, 'the ReplicaSets to go');
  await eventually(async () => (await livePods('web')).length === 0, 'the pods to go');
}, 60_000);

/**
 * The ReplicaSet and Deployment controllers on a fake clock against a real control plane: the
 * test plays the scheduler and agents (marking pods ready at the clock's time), moves the
 * clock, and looks at what a user would see — pods, ReplicaSets, conditions and events.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isNotFound } from '../../client/api/errors.js';
import type { Deployment, Pod, ReplicaSet } from '../../client/api/types.js';
import type { Client } from '../../client/client.js';
import { rfc3339, type FakeClock } from '../../client/util/clock.js';
import { DeploymentController } from '../../main/controllers/deployment/controller.js';
import { ReplicaSetController } from '../../main/controllers/replicaset/controller.js';
import { startFakeClockControllers, type FakeClockControllers } from '../support/fakeclockcontrollers.js';

let h: FakeClockControllers<[ReplicaSetController, DeploymentController]>;
let c: Client;
let clock: FakeClock;

beforeEach(async () => {
  h = await startFakeClockControllers(
    (ctx) => [new ReplicaSetController(ctx), new DeploymentController(ctx)],
    ['Deployment', 'ReplicaSet', 'Pod'],
  );
  ({ c, clock } = h);
});

afterEach(() => h.stop());

const settle = () => h.settle();
const pass = (seconds: number) => h.pass(seconds);

const pods = async () =>
  (await c.list('Pod', { namespace: 'default' })).items.filter((p) => !p.metadata?.deletionTimestamp);
const rsList = async () => (await c.list('ReplicaSet', { namespace: 'default' })).items;
const get = () => c.get('Deployment', 'web', { namespace: 'default' });
const progressing = async () => (await get()).status?.conditions?.find((x) => x.type === 'Progressing');

/**
 * Plays scheduler and agent: every pod not yet running runs and is ready from now on. The
 * controllers react while it goes, so a pod listed may be gone by its turn.
 */
async function runAll(): Promise<void> {
  for (const p of await pods()) {
    if (p.status?.phase === 'Running') continue;
    await c
      .updateStatus<Pod>({
        ...p,
        status: {
          phase: 'Running',
          conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: rfc3339(clock.now()) }],
        },
      })
      .catch((err) => {
        if (!isNotFound(err)) throw err;
      });
  }
  await settle();
}

function deployment(spec: Partial<NonNullable<Deployment['spec']>> = {}): Deployment {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'default' },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: { containers: [{ name: 'web', image: 'web:1' }] },
      },
      ...spec,
    },
  };
}

async function setImage(image: string): Promise<void> {
  await c.patch(
    'Deployment',
    'web',
    { spec: { template: { spec: { containers: [{ name: 'web', image }] } } } },
    { namespace: 'default' },
  );
  await settle();
}

describe('ReplicaSet', () => {
  it('counts a ready pod available only after minReadySeconds', async () => {
    await c.create<ReplicaSet>({
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name: 'slow', namespace: 'default' },
      spec: {
        replicas: 2,
        minReadySeconds: 10,
        selector: { matchLabels: { app: 'slow' } },
        template: {
          metadata: { labels: { app: 'slow' } },
          spec: { containers: [{ name: 'c', image: 'x' }] },
        },
      },
    });
    await settle();
    expect(await pods()).toHaveLength(2);
    await runAll();
    const status = async () => (await c.get('ReplicaSet', 'slow', { namespace: 'default' })).status;
    expect(await status()).toMatchObject({ replicas: 2, readyReplicas: 2, availableReplicas: 0 });
    await pass(9);
    expect((await status())?.availableReplicas).toBe(0);
    await pass(2);
    expect((await status())?.availableReplicas).toBe(2);
  });

  it('adopts an orphan its selector matches, and releases a pod whose labels stop matching', async () => {
    await c.create<Pod>({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'stray', namespace: 'default', labels: { app: 'adopt' } },
      spec: { containers: [{ name: 'c', image: 'x' }] },
    });
    await c.create<ReplicaSet>({
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name: 'adopt', namespace: 'default' },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'adopt' } },
        template: {
          metadata: { labels: { app: 'adopt' } },
          spec: { containers: [{ name: 'c', image: 'x' }] },
        },
      },
    });
    await settle();
    const stray = await c.get('Pod', 'stray', { namespace: 'default' });
    expect(stray.metadata?.ownerReferences?.[0]).toMatchObject({
      kind: 'ReplicaSet',
      name: 'adopt',
      controller: true,
    });
    expect(await pods()).toHaveLength(2);
    await c.patch('Pod', 'stray', { metadata: { labels: { app: 'elsewhere' } } }, { namespace: 'default' });
    await settle();
    expect((await c.get('Pod', 'stray', { namespace: 'default' })).metadata?.ownerReferences ?? []).toEqual(
      [],
    );
    const owned = (await pods()).filter((p) => p.metadata?.labels?.app === 'adopt');
    expect(owned).toHaveLength(2);
  });

  it('scales down the pending pod before the running ones', async () => {
    await c.create<ReplicaSet>({
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name: 'down', namespace: 'default' },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'down' } },
        template: {
          metadata: { labels: { app: 'down' } },
          spec: { containers: [{ name: 'c', image: 'x' }] },
        },
      },
    });
    await settle();
    await runAll();
    await c.patch('ReplicaSet', 'down', { spec: { replicas: 3 } }, { namespace: 'default' });
    await settle();
    const pending = (await pods()).find((p) => p.status?.phase !== 'Running')!;
    await c.patch('ReplicaSet', 'down', { spec: { replicas: 2 } }, { namespace: 'default' });
    await settle();
    const left = await pods();
    expect(left).toHaveLength(2);
    expect(left.map((p) => p.metadata?.name)).not.toContain(pending.metadata?.name);
    expect(left.every((p) => p.status?.phase === 'Running')).toBe(true);
  });
});

describe('Deployment', () => {
  it('reports ProgressDeadlineExceeded once progressDeadlineSeconds pass without progress', async () => {
    await c.create(deployment({ progressDeadlineSeconds: 30 }));
    await settle();
    // Created, and its pods created: progressing.
    expect(await progressing()).toMatchObject({ status: 'True', reason: 'ReplicaSetUpdated' });
    // The pods never start.
    await pass(29);
    expect((await progressing())?.reason).not.toBe('ProgressDeadlineExceeded');
    await pass(3);
    expect(await progressing()).toMatchObject({ status: 'False', reason: 'ProgressDeadlineExceeded' });
    // They start after all: the rollout completes.
    await runAll();
    await pass(1);
    expect(await progressing()).toMatchObject({ status: 'True', reason: 'NewReplicaSetAvailable' });
    expect((await get()).status?.conditions?.find((x) => x.type === 'Available')).toMatchObject({
      status: 'True',
    });
  });

  it('paused, scales but does not roll out; resumed, rolls out', async () => {
    await c.create(deployment());
    await settle();
    await runAll();
    await c.patch('Deployment', 'web', { spec: { paused: true } }, { namespace: 'default' });
    await settle();
    expect(await progressing()).toMatchObject({ status: 'Unknown', reason: 'DeploymentPaused' });
    await setImage('web:2');
    expect(await rsList()).toHaveLength(1);
    await c.patch('Deployment', 'web', { spec: { replicas: 5 } }, { namespace: 'default' });
    await settle();
    expect((await rsList())[0].spec?.replicas).toBe(5);
    expect(await pods()).toHaveLength(5);

    await c.patch('Deployment', 'web', { spec: { paused: false } }, { namespace: 'default' });
    await settle();
    for (let i = 0; i < 20 && (await progressing())?.reason !== 'NewReplicaSetAvailable'; i++) await runAll();
    const rss = await rsList();
    expect(rss).toHaveLength(2);
    const images = (await pods()).map((p) => p.spec?.containers?.[0]?.image);
    expect(images).toEqual(Array(5).fill('web:2'));
    const events = (await c.list('Event', { namespace: 'default' })).items
      .filter((e) => e.involvedObject?.kind === 'Deployment')
      .map((e) => e.message);
    expect(events.some((m) => /^Scaled up replica set web-\w+ from 0 to \d$/.test(m ?? ''))).toBe(true);
    expect(events.some((m) => /^Scaled down replica set web-\w+ from \d to 0$/.test(m ?? ''))).toBe(true);
  });

  it('keeps revisionHistoryLimit old ReplicaSets', async () => {
    await c.create(deployment({ replicas: 1, revisionHistoryLimit: 1 }));
    await settle();
    for (const image of ['web:2', 'web:3', 'web:4']) {
      await runAll();
      await setImage(image);
      for (let i = 0; i < 5; i++) await runAll();
    }
    const revisions = (await rsList())
      .map((rs) => rs.metadata?.annotations?.['deployment.kubernetes.io/revision'])
      .sort();
    expect(revisions).toEqual(['3', '4']);
  });
});

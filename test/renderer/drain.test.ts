/**
 * Drain: which pods it deletes and which it leaves, decided like `kubectl drain
 * --ignore-daemonsets`; and a drain run against a real control plane through the bridge — it
 * cordons first, deletes each pod the plan says to with the pod's own grace period, leaves
 * DaemonSet pods and other nodes' pods alone, follows each pod until it is gone, and can force
 * out a pod whose node will never confirm it stopped.
 */
import { createPinia, setActivePinia } from 'pinia';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Node, OwnerReference, Pod } from '../../client/api/types.js';
import type { BridgeClient } from '../../renderer/src/bridge/client.js';
import { drainBlocker, planDrain } from '../../renderer/src/node/drainplan.js';
import { DrainRun } from '../../renderer/src/node/drainrun.js';
import { usePods } from '../../renderer/src/stores/kinds.js';
import { startTestControlPlane, type TestControlPlane } from '../support/controlplane.js';
import { eventually } from '../support/wait.js';
import { loopbackBridge } from './loopback.js';

const owner = (kind: string, name: string): OwnerReference => ({
  apiVersion: kind === 'DaemonSet' ? 'apps/v1' : 'v1',
  kind,
  name,
  uid: `uid-${name}`,
  controller: true,
});

const pod = (
  name: string,
  extra: { owner?: OwnerReference; grace?: number; node?: string; phase?: string; deleting?: boolean } = {},
): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name,
    namespace: 'default',
    uid: `uid-pod-${name}`,
    ...(extra.owner ? { ownerReferences: [extra.owner] } : {}),
    ...(extra.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
  },
  spec: {
    nodeName: extra.node ?? 'n1',
    containers: [{ name: 'c', image: 'x' }],
    ...(extra.grace !== undefined ? { terminationGracePeriodSeconds: extra.grace } : {}),
  },
  ...(extra.phase ? { status: { phase: extra.phase } } : {}),
});

describe('planDrain', () => {
  const pods = [
    pod('web', { owner: owner('ReplicaSet', 'web-7d') }),
    pod('exporter', { owner: owner('DaemonSet', 'exporter') }),
    pod('scratch', { grace: 5 }),
    pod('job', { phase: 'Succeeded' }),
    pod('leaving', { owner: owner('ReplicaSet', 'web-7d'), deleting: true }),
  ];

  it('deletes managed and finished pods, skips DaemonSet pods, waits for terminating ones, blocks on unmanaged ones', () => {
    expect(planDrain(pods, { force: false }).map((i) => [i.key, i.action, i.reason])).toEqual([
      ['default/exporter', 'skip', 'DaemonSet pod (exporter): its DaemonSet would start it again here'],
      ['default/job', 'delete', 'finished (Succeeded)'],
      ['default/leaving', 'wait', 'already terminating'],
      ['default/scratch', 'blocked', 'not managed by a controller: deleting it loses it for good'],
      ['default/web', 'delete', 'managed by ReplicaSet web-7d: it will be replaced'],
    ]);
    expect(drainBlocker(planDrain(pods, { force: false }))).toContain('1 pod is not managed by a controller');
  });

  it('with force, deletes unmanaged pods too, keeping their grace periods', () => {
    const plan = planDrain(pods, { force: true });
    expect(drainBlocker(plan)).toBeUndefined();
    expect(plan.find((i) => i.key === 'default/scratch')).toMatchObject({
      action: 'delete',
      graceSeconds: 5,
    });
    expect(plan.find((i) => i.key === 'default/web')).toMatchObject({ graceSeconds: 30 });
  });

  it('refuses to run a plan with blocked pods', () => {
    expect(
      () => new DrainRun({} as BridgeClient, 'n1', planDrain(pods, { force: false }), () => undefined),
    ).toThrow(/may not delete/);
  });
});

describe('a drain run on a real control plane', () => {
  let t: TestControlPlane;
  let bridge: BridgeClient;

  beforeAll(async () => {
    t = await startTestControlPlane({ controllers: false });
    ({ bridge } = loopbackBridge(t));
    setActivePinia(createPinia());
  });
  afterAll(async () => {
    usePods().stop();
    await t.close();
  });

  it('cordons, deletes what the plan says, follows each pod until gone, and forces out a stuck one', async () => {
    const admin = t.cp.client();
    for (const name of ['n1', 'n2']) {
      await admin.create<Node>({ apiVersion: 'v1', kind: 'Node', metadata: { name } });
    }
    const create = (p: Pod) => {
      const { uid: _uid, ...metadata } = p.metadata!;
      return admin.create({ ...p, metadata });
    };
    await create(pod('exporter', { owner: owner('DaemonSet', 'exporter') }));
    // Grace period 0: deleted at once, as the agent would once its containers stopped.
    await create(pod('web', { owner: owner('ReplicaSet', 'web-7d'), grace: 0 }));
    // The default 30 s: with no agent on n1 to confirm, it stays terminating.
    await create(pod('scratch'));
    await create(pod('elsewhere', { node: 'n2', grace: 0 }));

    const pods = usePods();
    pods.start(bridge);
    await eventually(() => pods.indexed('n1').length === 3, 'the pods on n1');
    const plan = planDrain(pods.indexed('n1'), { force: true });
    let updates = 0;
    const run = new DrainRun(
      bridge,
      'n1',
      plan,
      (key) => pods.get(key),
      () => updates++,
    );
    const stopObserving = pods.onBatch(() => run.observe());
    const state = (key: string) => run.pods.find((p) => p.item.key === key)!;
    expect(state('default/exporter').state).toBe('skipped');

    await run.run();
    expect((await admin.get('Node', 'n1')).spec?.unschedulable).toBe(true);
    await eventually(() => state('default/web').state === 'gone', 'the managed pod to go');
    await eventually(
      () => state('default/scratch').state === 'terminating',
      'the unmanaged pod to terminate',
    );
    const scratch = await admin.get('Pod', 'scratch', { namespace: 'default' });
    expect(state('default/scratch').deadline).toBe(Date.parse(scratch.metadata!.deletionTimestamp!));
    expect(scratch.metadata?.deletionGracePeriodSeconds).toBe(30);
    expect(run.phase).toBe('waiting');

    await run.forceDelete(state('default/scratch'));
    await eventually(() => run.phase === 'done', 'the drain to finish');
    expect(state('default/scratch').state).toBe('gone');
    const left = await admin.list('Pod', { namespace: 'default' });
    expect(left.items.map((p) => p.metadata?.name).sort()).toEqual(['elsewhere', 'exporter']);
    expect(updates).toBeGreaterThan(3);
    stopObserving();
  });
});

/**
 * Rolling updates step by step over the controller's own decisions (manage, then the update
 * strategy when manage had nothing to do — as syncDaemonSet orders them), with pods that take
 * a step to become ready. At every step the unavailable count stays within maxUnavailable
 * (with surge: nothing is unavailable and at most maxSurge nodes run two pods), and the
 * rollout completes. OnDelete replaces only the pods a user deletes.
 */
import { describe, expect, it } from 'vitest';
import { isPodReady } from '../../../client/api/pods.js';
import type { DaemonSet, Node, Pod } from '../../../client/api/types.js';
import { PerKeyBackoff } from '../../../main/controllers/daemonset/backoff.js';
import { podsShouldBeOnNode } from '../../../main/controllers/daemonset/podsonnode.js';
import { rollingUpdatePlan, updateLimits } from '../../../main/controllers/daemonset/rollingupdate.js';
import type { NodeToDaemonPods } from '../../../main/controllers/daemonset/util.js';
import { ds, node, pod } from './fixtures.js';

const NOW = Date.parse('2026-01-01T02:00:00Z');

interface Cluster {
  nodes: Node[];
  pods: Pod[];
}

function cluster(n: number): Cluster {
  const nodes = Array.from({ length: n }, (_, i) => node(`n${i}`));
  return { nodes, pods: nodes.map((nd) => pod(nd.metadata!.name!, { hash: 'old' })) };
}

function byNode(c: Cluster): NodeToDaemonPods {
  const m: NodeToDaemonPods = new Map();
  for (const p of c.pods) m.set(p.spec!.nodeName!, [...(m.get(p.spec!.nodeName!) ?? []), p]);
  return m;
}

/** One sync: manage's creates and deletes, or else the strategy's. Returns whether anything was done. */
function sync(c: Cluster, set: DaemonSet, hash: string): boolean {
  const backoff = new PerKeyBackoff();
  const pods = byNode(c);
  const create: string[] = [];
  const remove: Pod[] = [];
  for (const nd of c.nodes) {
    const plan = podsShouldBeOnNode(nd, pods.get(nd.metadata!.name!) ?? [], set, hash, backoff, NOW);
    if (plan.create) create.push(nd.metadata!.name!);
    remove.push(...plan.delete);
  }
  if (!create.length && !remove.length && set.spec?.updateStrategy?.type !== 'OnDelete') {
    const plan = rollingUpdatePlan(set, c.nodes, pods, hash, NOW);
    create.push(...plan.createOnNodes);
    remove.push(...plan.deletePods);
  }
  c.pods = c.pods.filter((p) => !remove.includes(p));
  for (const name of create) c.pods.push(pod(name, { hash, ready: false }));
  return create.length + remove.length > 0;
}

/** The kubelets: pods created in an earlier step become ready. */
function becomeReady(c: Cluster, fresh: Set<Pod>): void {
  c.pods = c.pods.map((p) =>
    isPodReady(p) || fresh.has(p)
      ? p
      : { ...p, status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } },
  );
}

function rollOut(set: DaemonSet, n: number) {
  const c = cluster(n);
  const { maxUnavailable, maxSurge } = updateLimits(set, c.nodes, new Map());
  let worstUnavailable = 0;
  let worstSurge = 0;
  for (let step = 0; step < 10 * n; step++) {
    const before = new Set(c.pods);
    sync(c, set, 'new');
    becomeReady(c, new Set(c.pods.filter((p) => !before.has(p))));
    const pods = byNode(c);
    const unavailable = c.nodes.filter((nd) => !(pods.get(nd.metadata!.name!) ?? []).some(isPodReady)).length;
    const doubled = c.nodes.filter((nd) => (pods.get(nd.metadata!.name!) ?? []).length > 1).length;
    worstUnavailable = Math.max(worstUnavailable, unavailable);
    worstSurge = Math.max(worstSurge, doubled);
    expect(unavailable, `step ${step}: unavailable`).toBeLessThanOrEqual(maxUnavailable);
    expect(doubled, `step ${step}: nodes with two pods`).toBeLessThanOrEqual(maxSurge);
    const done = c.nodes.every((nd) => {
      const list = pods.get(nd.metadata!.name!) ?? [];
      return (
        list.length === 1 &&
        list[0].metadata?.labels?.['controller-revision-hash'] === 'new' &&
        isPodReady(list[0])
      );
    });
    if (done) return { steps: step + 1, worstUnavailable, worstSurge, maxUnavailable, maxSurge };
  }
  throw new Error('the rollout did not complete');
}

const strategy = (rollingUpdate: { maxUnavailable?: number | string; maxSurge?: number | string }) =>
  ds({}, { updateStrategy: { type: 'RollingUpdate', rollingUpdate } });

describe('RollingUpdate', () => {
  it('maxUnavailable=1: one node at a time, and it completes', () => {
    const r = rollOut(strategy({ maxUnavailable: 1, maxSurge: 0 }), 6);
    expect(r.maxUnavailable).toBe(1);
    expect(r.worstUnavailable).toBe(1);
  });

  it('maxUnavailable=30%: rounds up (3 of 10), uses it, and completes', () => {
    const r = rollOut(strategy({ maxUnavailable: '30%', maxSurge: 0 }), 10);
    expect(r.maxUnavailable).toBe(3);
    expect(r.worstUnavailable).toBe(3);
  });

  it('maxSurge=1: never a node without an available pod, one node with two at most, and it completes', () => {
    const r = rollOut(strategy({ maxUnavailable: 0, maxSurge: 1 }), 6);
    expect(r.maxSurge).toBe(1);
    expect(r.worstUnavailable).toBe(0);
    expect(r.worstSurge).toBe(1);
  });

  it('replaces an old pod that is not available at once, beyond the pace', () => {
    const c = cluster(4);
    c.pods[0] = pod('n0', { hash: 'old', ready: false });
    c.pods[1] = pod('n1', { hash: 'old', ready: false });
    const plan = rollingUpdatePlan(strategy({ maxUnavailable: 1 }), c.nodes, byNode(c), 'new', NOW);
    // Both broken pods go (they are unavailable anyway); no healthy one on top.
    expect(plan.deletePods.map((p) => p.spec?.nodeName).sort()).toEqual(['n0', 'n1']);
  });

  it('counts a pod as available only after minReadySeconds', () => {
    const set = strategy({ maxUnavailable: 1 });
    set.spec!.minReadySeconds = 30;
    const c = cluster(3);
    c.pods = c.pods.map((p, i) =>
      i === 0 ? pod('n0', { hash: 'new', readySince: new Date(NOW - 10_000).toISOString() }) : p,
    );
    // n0's new pod is ready but not yet available: it uses up the one unavailable allowed.
    expect(rollingUpdatePlan(set, c.nodes, byNode(c), 'new', NOW).deletePods).toEqual([]);
    expect(rollingUpdatePlan(set, c.nodes, byNode(c), 'new', NOW + 25_000).deletePods).toHaveLength(1);
  });
});

describe('OnDelete', () => {
  it('leaves old pods until a user deletes one; its replacement has the new template', () => {
    const set = ds({}, { updateStrategy: { type: 'OnDelete' } });
    const c = cluster(3);
    for (let i = 0; i < 5; i++) expect(sync(c, set, 'new')).toBe(false);
    expect(c.pods.every((p) => p.metadata?.labels?.['controller-revision-hash'] === 'old')).toBe(true);
    c.pods = c.pods.filter((p) => p.spec?.nodeName !== 'n1');
    expect(sync(c, set, 'new')).toBe(true);
    const n1 = c.pods.filter((p) => p.spec?.nodeName === 'n1');
    expect(n1.map((p) => p.metadata?.labels?.['controller-revision-hash'])).toEqual(['new']);
    expect(c.pods.filter((p) => p.metadata?.labels?.['controller-revision-hash'] === 'old')).toHaveLength(2);
  });
});

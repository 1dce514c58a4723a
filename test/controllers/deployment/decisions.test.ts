/**
 * The Deployment controller's decisions, as tables: maxSurge/maxUnavailable rounding, how far
 * the new ReplicaSet may grow, how far old ones may shrink, proportional scaling during a
 * rollout, the revision annotations, and the Progressing/Available conditions over time.
 */
import { describe, expect, it } from 'vitest';
import type { Deployment, ReplicaSet } from '../../../client/api/types.js';
import { newReplicaSetTarget, oldReplicaSetsPlan } from '../../../main/controllers/deployment/rolling.js';
import { activeOrLatest, scalePlan } from '../../../main/controllers/deployment/scale.js';
import { rolloutStatus, stuckRequeueMs } from '../../../main/controllers/deployment/status.js';
import {
  equalIgnoreHash,
  maxUnavailable,
  newRSNewReplicas,
  resolveFenceposts,
  setNewReplicaSetAnnotations,
} from '../../../main/controllers/deployment/util.js';

const NOW = Date.parse('2026-06-01T12:00:00Z');
const at = (s: number) => new Date(NOW + s * 1000).toISOString().replace(/\.\d+Z$/, 'Z');

function deploy(
  replicas: number,
  surge: number | string = '25%',
  unavailable: number | string = '25%',
): Deployment {
  return {
    metadata: { name: 'web', namespace: 'default', generation: 1 },
    spec: {
      replicas,
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: { containers: [{ name: 'c', image: 'web:2' }] },
      },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: surge, maxUnavailable: unavailable } },
      progressDeadlineSeconds: 600,
    },
    status: { observedGeneration: 1 },
  };
}

let seq = 0;
function rs(
  name: string,
  replicas: number,
  opts: { available?: number; actual?: number; maxReplicas?: number; created?: number } = {},
): ReplicaSet {
  return {
    metadata: {
      name,
      uid: name,
      creationTimestamp: at(opts.created ?? seq++),
      annotations:
        opts.maxReplicas !== undefined
          ? { 'deployment.kubernetes.io/max-replicas': String(opts.maxReplicas) }
          : {},
    },
    spec: { replicas },
    status: {
      replicas: opts.actual ?? replicas,
      readyReplicas: opts.available ?? replicas,
      availableReplicas: opts.available ?? replicas,
    },
  };
}

describe('maxSurge and maxUnavailable', () => {
  it.each([
    [10, '25%', '25%', 3, 2],
    [4, '25%', '25%', 1, 1],
    [10, '1%', '1%', 1, 0],
    [10, 0, 0, 0, 1],
    [10, '0%', '0%', 0, 1],
    [3, 2, '50%', 2, 1],
  ])('%i replicas, surge %s, unavailable %s → %i up, %i down', (replicas, surge, unavailable, up, down) => {
    expect(resolveFenceposts(deploy(replicas, surge, unavailable))).toEqual({ surge: up, unavailable: down });
  });

  it('never more unavailable than replicas, none for Recreate or 0 replicas', () => {
    expect(maxUnavailable(deploy(2, 0, 5))).toBe(2);
    expect(maxUnavailable(deploy(0))).toBe(0);
    const recreate = deploy(5);
    recreate.spec!.strategy = { type: 'Recreate' };
    expect(maxUnavailable(recreate)).toBe(0);
  });
});

describe('rolling update', () => {
  it.each([
    ['starts with maxSurge new pods', 10, 3, [10], 0, 3],
    ['waits while at replicas + maxSurge', 10, 3, [8], 5, undefined],
    ['grows into room old pods left', 10, 3, [5], 5, 8],
    ['never past replicas', 10, 3, [0], 8, 10],
    ['shrinks one grown past replicas', 4, 1, [], 6, 4],
  ])('new ReplicaSet: %s', (_why, replicas, surge, olds, current, target) => {
    const d = deploy(replicas, surge, 0);
    const newRS = rs('new', current);
    const all = [...olds.map((n, i) => rs(`old-${i}`, n)), newRS];
    expect(newReplicaSetTarget(d, all, newRS)).toBe(target);
  });

  it('old ReplicaSets: only down to replicas − maxUnavailable available pods', () => {
    const d = deploy(10, 3, 2);
    const old = rs('old', 10);
    const newRS = rs('new', 3, { available: 0 });
    expect(oldReplicaSetsPlan(d, [old, newRS], [old], newRS).map((s) => s.to)).toEqual([8]);
  });

  it('old ReplicaSets: unhealthy pods go first, then available ones as far as allowed', () => {
    const d = deploy(10, 3, 2);
    const old = rs('old', 10, { available: 7 });
    const newRS = rs('new', 3, { available: 3 });
    expect(oldReplicaSetsPlan(d, [old, newRS], [old], newRS).map((s) => s.to)).toEqual([7, 5]);
  });

  it('old ReplicaSets: a stale status (more available than asked for) scales nothing until it is fresh', () => {
    const d = deploy(1000, '25%', '25%');
    const old = rs('old', 750, { available: 1000, actual: 1000 });
    const newRS = rs('new', 250, { available: 250 });
    // Waits for the ReplicaSet controller's report instead of scaling on stale numbers.
    expect(oldReplicaSetsPlan(d, [old, newRS], [old], newRS)).toEqual([]);
    const fresh = rs('old', 750, { available: 750 });
    expect(oldReplicaSetsPlan(d, [fresh, newRS], [fresh], newRS).map((s) => s.to)).toEqual([500]);
  });

  it('old ReplicaSets: nothing while new pods are still coming up', () => {
    const d = deploy(10, 3, 0);
    const old = rs('old', 10);
    const newRS = rs('new', 3, { available: 0 });
    expect(oldReplicaSetsPlan(d, [old, newRS], [old], newRS)).toEqual([]);
  });

  it('the oldest ReplicaSet is scaled down first', () => {
    const d = deploy(4, 0, 2);
    const older = rs('older', 2, { created: -100 });
    const newer = rs('newer', 2, { created: -50 });
    const newRS = rs('new', 0);
    const steps = oldReplicaSetsPlan(d, [older, newer, newRS], [older, newer], newRS);
    expect(steps.map((s) => [s.rs.metadata?.name, s.to])).toEqual([['older', 0]]);
  });

  it('Recreate gives the new ReplicaSet everything at once', () => {
    const d = deploy(5);
    d.spec!.strategy = { type: 'Recreate' };
    expect(newRSNewReplicas(d, [rs('old', 5), rs('new', 0)], rs('new', 0))).toBe(5);
  });
});

describe('scaling', () => {
  it('one active ReplicaSet takes the new size', () => {
    const newRS = rs('new', 3);
    expect(
      scalePlan(deploy(5), newRS, [rs('old', 0)]).map((s) => [s.rs.metadata?.name, s.to, s.operation]),
    ).toEqual([['new', 5, 'up']]);
  });

  it('with none active, the newest takes it', () => {
    const old = rs('old', 0, { created: -10 });
    expect(activeOrLatest(undefined, [rs('older', 0, { created: -20 }), old])).toBe(old);
  });

  it('mid-rollout, shares the change in proportion (10 → 15 replicas: old 8 → 11, new 5 → 7)', () => {
    const d = deploy(15, 3, 2);
    const old = rs('old', 8, { maxReplicas: 13 });
    const newRS = rs('new', 5, { maxReplicas: 13, available: 0 });
    const plan = scalePlan(d, newRS, [old]);
    expect(Object.fromEntries(plan.map((s) => [s.rs.metadata?.name, s.to]))).toEqual({ old: 11, new: 7 });
  });

  it('mid-rollout, scales down in proportion too, leftovers from the largest', () => {
    const d = deploy(5, 1, 0);
    const old = rs('old', 6, { maxReplicas: 11, created: -10 });
    const newRS = rs('new', 5, { maxReplicas: 11, available: 0 });
    const plan = scalePlan(d, newRS, [old]);
    const sizes = Object.fromEntries(plan.map((s) => [s.rs.metadata?.name, s.to]));
    expect(sizes.old + sizes.new).toBe(6);
    expect(sizes).toEqual({ old: 3, new: 3 });
  });

  it('a saturated new ReplicaSet means the old ones go to 0', () => {
    const d = deploy(3);
    const newRS = rs('new', 3);
    newRS.metadata!.annotations!['deployment.kubernetes.io/desired-replicas'] = '3';
    const plan = scalePlan(d, newRS, [rs('old', 1)]);
    expect(plan.map((s) => [s.rs.metadata?.name, s.to])).toEqual([['old', 0]]);
  });
});

describe('revisions', () => {
  it('a ReplicaSet brought back by a rollback keeps the revisions it had in revision-history', () => {
    const d = deploy(3);
    d.metadata!.annotations = {
      'kubernetes.io/change-cause': 'undo',
      'kubectl.kubernetes.io/last-applied-configuration': '{}',
    };
    const back = rs('old', 0);
    back.metadata!.annotations = { 'deployment.kubernetes.io/revision': '1' };
    expect(setNewReplicaSetAnnotations(d, back, 3, true)).toBe(true);
    expect(back.metadata!.annotations).toEqual({
      'deployment.kubernetes.io/revision': '3',
      'deployment.kubernetes.io/revision-history': '1',
      'kubernetes.io/change-cause': 'undo',
    });
    setNewReplicaSetAnnotations(d, back, 5, true);
    expect(back.metadata!.annotations!['deployment.kubernetes.io/revision-history']).toBe('1,3');
  });

  it('a new ReplicaSet gets its replicas annotations', () => {
    const fresh = rs('new', 0);
    fresh.metadata!.annotations = {};
    setNewReplicaSetAnnotations(deploy(10, 3, 2), fresh, 1, false);
    expect(fresh.metadata!.annotations).toMatchObject({
      'deployment.kubernetes.io/revision': '1',
      'deployment.kubernetes.io/desired-replicas': '10',
      'deployment.kubernetes.io/max-replicas': '13',
    });
  });

  it('templates compare without the pod-template-hash label, empty maps as absent', () => {
    const a = {
      metadata: { labels: { app: 'web', 'pod-template-hash': 'abc' } },
      spec: { containers: [{ name: 'c' }] },
    };
    const b = {
      metadata: { labels: { app: 'web' }, annotations: {} },
      spec: { containers: [{ name: 'c' }] },
    };
    expect(equalIgnoreHash(a, b)).toBe(true);
    expect(equalIgnoreHash(a, { ...b, spec: { containers: [{ name: 'd' }] } })).toBe(false);
  });
});

describe('rollout conditions over time', () => {
  const progressing = (d: Deployment) => d.status?.conditions?.find((c) => c.type === 'Progressing');

  it('progressing, then stuck past the deadline, then available once complete', () => {
    const d = deploy(2, 1, 0);
    d.spec!.progressDeadlineSeconds = 60;
    // The status already says what the ReplicaSets say: no progress since.
    d.status = {
      observedGeneration: 1,
      replicas: 3,
      updatedReplicas: 1,
      readyReplicas: 2,
      availableReplicas: 2,
      conditions: [
        {
          type: 'Progressing',
          status: 'True',
          reason: 'NewReplicaSetCreated',
          lastUpdateTime: at(0),
          lastTransitionTime: at(0),
        },
      ],
    };
    const newRS = rs('new', 1, { available: 0 });
    const old = rs('old', 2);
    // Nothing moves: within the deadline the condition stays, and a requeue is due after it.
    let st = rolloutStatus([old, newRS], newRS, d, NOW + 30_000);
    expect(progressing({ ...d, status: st })?.reason).toBe('NewReplicaSetCreated');
    expect(stuckRequeueMs(d, st, NOW + 30_000)).toBe(31_000);
    // Past it: ProgressDeadlineExceeded.
    st = rolloutStatus([old, newRS], newRS, d, NOW + 61_000);
    expect(progressing({ ...d, status: st })).toMatchObject({
      status: 'False',
      reason: 'ProgressDeadlineExceeded',
      message: 'ReplicaSet "new" has timed out progressing.',
    });
    expect(st.conditions?.find((c) => c.type === 'Available')).toMatchObject({ status: 'True' });
    // Everything comes up: NewReplicaSetAvailable.
    const done = rs('new', 2);
    st = rolloutStatus([rs('old', 0, { actual: 0 }), done], done, { ...d, status: st }, NOW + 90_000);
    expect(progressing({ ...d, status: st })).toMatchObject({
      status: 'True',
      reason: 'NewReplicaSetAvailable',
      message: 'ReplicaSet "new" has successfully progressed.',
    });
  });

  it('progress moves lastUpdateTime, not lastTransitionTime', () => {
    const d = deploy(2, 1, 0);
    d.status = {
      observedGeneration: 1,
      updatedReplicas: 0,
      replicas: 2,
      conditions: [
        {
          type: 'Progressing',
          status: 'True',
          reason: 'NewReplicaSetCreated',
          lastUpdateTime: at(0),
          lastTransitionTime: at(0),
        },
      ],
    };
    const newRS = rs('new', 1, { available: 0 });
    const st = rolloutStatus([rs('old', 2), newRS], newRS, d, NOW + 10_000);
    expect(progressing({ ...d, status: st })).toMatchObject({
      reason: 'ReplicaSetUpdated',
      lastUpdateTime: at(10),
      lastTransitionTime: at(0),
    });
  });

  it('Available is False below replicas − maxUnavailable', () => {
    const d = deploy(4, 1, 1);
    const newRS = rs('new', 4, { available: 2 });
    const st = rolloutStatus([newRS], newRS, d, NOW);
    expect(st.conditions?.find((c) => c.type === 'Available')).toMatchObject({
      status: 'False',
      reason: 'MinimumReplicasUnavailable',
    });
  });
});

/**
 * Scaling a Deployment without a template change (DeploymentController.scale): with one active
 * ReplicaSet it takes the new size; once the new one is saturated the old ones go to 0; during
 * a rolling update the change is shared among the active ReplicaSets in proportion to their
 * sizes (proportional scaling), leftovers to the largest, so a scale mid-rollout keeps its
 * ratio of old to new pods.
 */
import type { Deployment, ReplicaSet } from '../../../client/api/types.js';
import {
  activeReplicaSets,
  byCreation,
  bySizeNewer,
  bySizeOlder,
  isRollingUpdate,
  isSaturated,
  maxSurge,
  proportion,
  replicasOf,
  specReplicas,
} from './util.js';

export interface ScaleStep {
  rs: ReplicaSet;
  to: number;
  /** "up" or "down" for the event; undefined when only the annotations change. */
  operation?: 'up' | 'down';
}

/** The only active ReplicaSet, or the newest when none is active (FindActiveOrLatest). */
export function activeOrLatest(newRS: ReplicaSet | undefined, old: ReplicaSet[]): ReplicaSet | undefined {
  const sortedOld = [...old].sort((a, b) => byCreation(b, a));
  const active = activeReplicaSets(newRS ? [...sortedOld, newRS] : sortedOld);
  if (active.length === 0) return newRS ?? sortedOld[0];
  if (active.length === 1) return active[0];
  return undefined;
}

export function scalePlan(d: Deployment, newRS: ReplicaSet | undefined, old: ReplicaSet[]): ScaleStep[] {
  const only = activeOrLatest(newRS, old);
  if (only) {
    if (replicasOf(only) === replicasOf(d)) return [];
    return [{ rs: only, to: replicasOf(d), operation: replicasOf(only) < replicasOf(d) ? 'up' : 'down' }];
  }
  if (isSaturated(d, newRS)) {
    return activeReplicaSets(old).map((rs) => ({ rs, to: 0, operation: 'down' as const }));
  }
  if (!isRollingUpdate(d)) return [];
  const all = activeReplicaSets(newRS ? [...old, newRS] : old);
  const allowed = replicasOf(d) > 0 ? replicasOf(d) + maxSurge(d) : 0;
  const toAdd = allowed - specReplicas(all);
  let operation: 'up' | 'down' | undefined;
  if (toAdd > 0) {
    all.sort(bySizeNewer);
    operation = 'up';
  } else if (toAdd < 0) {
    all.sort(bySizeOlder);
    operation = 'down';
  }
  let added = 0;
  const sizes = all.map((rs) => {
    if (toAdd === 0) return replicasOf(rs);
    const p = proportion(rs, d, toAdd, added);
    added += p;
    return replicasOf(rs) + p;
  });
  // Leftovers go to (or come from) the largest.
  if (toAdd !== 0 && all.length) sizes[0] = Math.max(0, sizes[0] + toAdd - added);
  return all.map((rs, i) => ({ rs, to: sizes[i], ...(operation ? { operation } : {}) }));
}

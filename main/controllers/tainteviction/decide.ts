/**
 * When a pod must leave a node with NoExecute taints (Kubernetes' taint eviction controller,
 * processPodOnNode with GetMatchingTolerations and getMinTolerationTime), pure.
 *
 * - A taint no toleration matches: the pod goes at once.
 * - Otherwise each taint counts with the FIRST of the pod's tolerations that matches it (in the
 *   pod's order, even if a later one is shorter or forever), and the pod may stay for the
 *   shortest tolerationSeconds among those; none with seconds means forever.
 * - An eviction already scheduled keeps its time while the pod still has to go after a while:
 *   a toleration lengthened or shortened later, or a taint swapped for another, does not move
 *   it (Kubernetes' TimedWorkerQueue.AddWork skips a pod that already has work). It is only
 *   cancelled (the taints went, or every taint is now tolerated forever) or brought forward to
 *   now (a taint is no longer tolerated at all).
 */
import { tolerates } from '../../../client/api/taints.js';
import type { Taint, Toleration } from '../../../client/api/types.js';

export interface ScheduledEviction {
  /** When the pod is to be deleted (ms since the epoch). */
  at: number;
}

export type EvictionDecision = { action: 'keep' } | { action: 'cancel' } | { action: 'schedule'; at: number };

export function noExecuteTaints(taints: Taint[] | undefined): Taint[] {
  return (taints ?? []).filter((t) => t.effect === 'NoExecute');
}

/**
 * For each taint, the first toleration (in the pod's order) that tolerates it; undefined if a
 * taint has none (Kubernetes' GetMatchingTolerations).
 */
export function matchingTolerations(
  taints: Taint[],
  tolerations: Toleration[] | undefined,
): Toleration[] | undefined {
  const used: Toleration[] = [];
  for (const taint of taints) {
    const first = (tolerations ?? []).find((t) => tolerates(t, taint));
    if (!first) return undefined;
    used.push(first);
  }
  return used;
}

/**
 * How long the tolerations used let a pod stay, in ms (Kubernetes' getMinTolerationTime): the
 * shortest tolerationSeconds, 0 if one is zero or negative, Infinity if none has seconds.
 */
export function minTolerationMs(used: Toleration[]): number {
  let min = Infinity;
  for (const t of used) {
    if (typeof t.tolerationSeconds !== 'number') continue; // forever
    if (t.tolerationSeconds <= 0) return 0;
    min = Math.min(min, t.tolerationSeconds * 1000);
  }
  return min;
}

export function decideEviction(
  taints: Taint[],
  tolerations: Toleration[] | undefined,
  scheduled: ScheduledEviction | undefined,
  now: number,
): EvictionDecision {
  const cancelOrKeep: EvictionDecision = scheduled ? { action: 'cancel' } : { action: 'keep' };
  if (!taints.length) return cancelOrKeep;
  const used = matchingTolerations(taints, tolerations);
  if (!used) {
    // At once. An eviction already due is left to fire, so the pod is not deleted twice.
    return scheduled && scheduled.at <= now ? { action: 'keep' } : { action: 'schedule', at: now };
  }
  const stayMs = minTolerationMs(used);
  if (stayMs === Infinity) return cancelOrKeep;
  // The first deadline stands: a pod cannot buy more time by editing its tolerations once
  // its eviction is counting down (Kubernetes' "lengthening toleration shouldn't work"), and
  // Kubernetes does not bring it forward either when they are shortened.
  if (scheduled) return { action: 'keep' };
  // Counted from when this controller saw the pod under the taints, as in Kubernetes: a pod
  // placed on a node that was tainted long ago still gets its full toleration.
  return { action: 'schedule', at: now + stayMs };
}

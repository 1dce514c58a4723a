/**
 * When a pod must leave a node with NoExecute taints (Kubernetes' taint eviction
 * controller, processPodOnNode), pure: at once if a taint is not tolerated, never if every
 * matching toleration is forever, otherwise after the shortest tolerationSeconds counted from
 * when the pod first came under the taints.
 */
import { noExecuteTolerationMs } from '../../../client/api/taints.js';
import type { Taint, Toleration } from '../../../client/api/types.js';

export interface ScheduledEviction {
  /** When the pod came under the taints (the toleration counts from here). */
  since: number;
  at: number;
}

export type EvictionDecision =
  { action: 'keep' } | { action: 'cancel' } | { action: 'schedule'; eviction: ScheduledEviction };

export function noExecuteTaints(taints: Taint[] | undefined): Taint[] {
  return (taints ?? []).filter((t) => t.effect === 'NoExecute');
}

export function decideEviction(
  taints: Taint[],
  tolerations: Toleration[] | undefined,
  scheduled: ScheduledEviction | undefined,
  now: number,
): EvictionDecision {
  const cancelOrKeep: EvictionDecision = scheduled ? { action: 'cancel' } : { action: 'keep' };
  if (!taints.length) return cancelOrKeep;
  const tolerationMs = noExecuteTolerationMs(taints, tolerations);
  if (tolerationMs === Infinity) return cancelOrKeep;
  // Counted from when this controller saw the pod under the taints, as in Kubernetes: a pod
  // placed on a node that was tainted long ago still gets its full toleration.
  const since = scheduled?.since ?? now;
  const at = Math.max(now, since + tolerationMs);
  if (scheduled && scheduled.at === at) return { action: 'keep' };
  return { action: 'schedule', eviction: { since, at } };
}

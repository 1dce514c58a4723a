/**
 * Which pods a ReplicaSet deletes first when it has too many (getPodsToDelete with
 * ActivePodsWithRanks and LogarithmicScaleDown): unscheduled before scheduled; Pending, then
 * Unknown, then Running; not ready before ready; a lower pod-deletion-cost first; pods doubled up
 * on a node with more of their siblings first; ready for less time first; more container
 * restarts first; newer first. Times compare on a log₂ scale, so pods that came up within the
 * same doubling of age are equals and the UID decides — a scale-down spreads over generations
 * instead of always taking the very newest.
 */
import { isPodReady } from '../../../client/api/pods.js';
import type { Pod } from '../../../client/api/types.js';

export const POD_DELETION_COST_ANNOTATION = 'controller.kubernetes.io/pod-deletion-cost';

const PHASE_RANK: Record<string, number> = { Pending: 0, Unknown: 1, Running: 2 };

interface Ranked {
  pod: Pod;
  /** Active siblings (pods of the same controller) on the pod's node, itself included. */
  rank: number;
}

/** The annotation as an int32; anything else counts as 0 (helper.GetDeletionCostFromPodAnnotations). */
export function deletionCost(pod: Pod): number {
  const v = pod.metadata?.annotations?.[POD_DELETION_COST_ANNOTATION];
  if (v === undefined || !/^[+-]?\d+$/.test(v.trim())) return 0;
  const n = Number(v.trim());
  return n >= -(2 ** 31) && n <= 2 ** 31 - 1 ? n : 0;
}

function readySince(pod: Pod): number | undefined {
  const c = pod.status?.conditions?.find((x) => x.type === 'Ready' && x.status === 'True');
  const t = c?.lastTransitionTime ? Date.parse(c.lastTransitionTime) : NaN;
  return Number.isFinite(t) ? t : undefined;
}

function created(pod: Pod): number | undefined {
  const t = pod.metadata?.creationTimestamp ? Date.parse(pod.metadata.creationTimestamp) : NaN;
  return Number.isFinite(t) ? t : undefined;
}

function maxRestarts(pod: Pod): number {
  return Math.max(0, ...(pod.status?.containerStatuses ?? []).map((s) => s.restartCount ?? 0));
}

/** ⌊log₂(age in ns)⌋, or -1 for no age (logarithmicRankDiff). */
function logRank(t: number, now: number): number {
  const ns = (now - t) * 1e6;
  return ns > 0 ? Math.floor(Math.log2(ns)) : -1;
}

/**
 * Newer (or empty) first; times in the same log₂ bucket tie and the lower UID goes first
 * (afterOrZero / logarithmicRankDiff). Returns undefined when the times are equal.
 */
function compareTimes(
  a: Ranked,
  b: Ranked,
  ta: number | undefined,
  tb: number | undefined,
  now: number,
): number | undefined {
  if (ta === tb) return undefined;
  if (ta === undefined) return -1;
  if (tb === undefined) return 1;
  const diff = logRank(ta, now) - logRank(tb, now);
  if (diff === 0) {
    const ua = a.pod.metadata?.uid ?? '';
    const ub = b.pod.metadata?.uid ?? '';
    return ua < ub ? -1 : ua > ub ? 1 : 0;
  }
  return diff;
}

/** Negative when `a` should be deleted before `b`. */
export function compareForDeletion(a: Ranked, b: Ranked, now: number): number {
  const assignedA = !!a.pod.spec?.nodeName;
  const assignedB = !!b.pod.spec?.nodeName;
  if (assignedA !== assignedB) return assignedA ? 1 : -1;
  const phaseA = PHASE_RANK[a.pod.status?.phase ?? ''] ?? 0;
  const phaseB = PHASE_RANK[b.pod.status?.phase ?? ''] ?? 0;
  if (phaseA !== phaseB) return phaseA - phaseB;
  const readyA = isPodReady(a.pod);
  const readyB = isPodReady(b.pod);
  if (readyA !== readyB) return readyA ? 1 : -1;
  const costA = deletionCost(a.pod);
  const costB = deletionCost(b.pod);
  if (costA !== costB) return costA - costB;
  if (a.rank !== b.rank) return b.rank - a.rank;
  if (readyA && readyB) {
    const byReady = compareTimes(a, b, readySince(a.pod), readySince(b.pod), now);
    if (byReady !== undefined) return byReady;
  }
  const restarts = maxRestarts(b.pod) - maxRestarts(a.pod);
  if (restarts !== 0) return restarts;
  return compareTimes(a, b, created(a.pod), created(b.pod), now) ?? 0;
}

/**
 * The `count` pods of `pods` to delete first; `related` are the active pods of the same
 * controller (the ReplicaSet's, or every ReplicaSet's of its Deployment), for the rank.
 */
export function podsToDelete(pods: Pod[], related: Pod[], count: number, now: number): Pod[] {
  if (count >= pods.length) return [...pods];
  const perNode = new Map<string, number>();
  for (const p of related) {
    const node = p.spec?.nodeName;
    if (node) perNode.set(node, (perNode.get(node) ?? 0) + 1);
  }
  const ranked: Ranked[] = pods.map((pod) => ({
    pod,
    rank: pod.spec?.nodeName ? (perNode.get(pod.spec.nodeName) ?? 0) : 0,
  }));
  ranked.sort((a, b) => compareForDeletion(a, b, now));
  return ranked.slice(0, count).map((r) => r.pod);
}

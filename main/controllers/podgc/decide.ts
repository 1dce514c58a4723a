/**
 * Which pods the pod garbage collector removes, and how it marks them (Kubernetes'
 * pkg/controller/podgc), pure: finished pods beyond the threshold, evicted then oldest first
 * (gcTerminated); the pods of a node missing for longer than the quarantine (gcOrphaned);
 * terminating pods that were never scheduled (gcUnscheduledTerminating); terminating pods of a
 * node its admin marked out of service (gcTerminating).
 */
import { isPodTerminal } from '../../../client/api/pods.js';
import { TAINT_OUT_OF_SERVICE } from '../../../client/api/taints.js';
import type { Node, Pod, PodCondition, PodStatus } from '../../../client/api/types.js';
import { rfc3339 } from '../../../client/util/clock.js';

/** Why a pod is force-deleted: the `reason` label of Kubernetes' pod GC metrics. */
export type GcReason = 'terminated' | 'orphaned' | 'unscheduled' | 'out-of-service';

/** Kubernetes' eviction.PodIsEvicted: failed because its node ran short of a resource. */
function isEvicted(pod: Pod): boolean {
  return pod.status?.phase === 'Failed' && pod.status.reason === 'Evicted';
}

function createdAt(pod: Pod): number {
  const t = Date.parse(pod.metadata?.creationTimestamp ?? '');
  return Number.isFinite(t) ? t : 0;
}

/**
 * Evicted pods first — they say least about the workloads that made them — then the oldest,
 * then by name (byEvictionAndCreationTimestamp).
 */
export function byEvictionThenAge(a: Pod, b: Pod): number {
  if (isEvicted(a) !== isEvicted(b)) return isEvicted(a) ? -1 : 1;
  const age = createdAt(a) - createdAt(b);
  if (age !== 0) return age;
  const [na, nb] = [a.metadata?.name ?? '', b.metadata?.name ?? ''];
  return na < nb ? -1 : na > nb ? 1 : 0;
}

/**
 * The finished pods to delete so that at most `threshold` remain (none when the threshold is
 * 0). Pods already being deleted are on their way out: they are neither counted nor chosen.
 */
export function terminatedPodsToDelete(pods: Pod[], threshold: number): Pod[] {
  if (threshold <= 0) return [];
  const finished = pods.filter((p) => isPodTerminal(p) && !p.metadata?.deletionTimestamp);
  const excess = finished.length - threshold;
  return excess > 0 ? finished.sort(byEvictionThenAge).slice(0, excess) : [];
}

export type OrphanCheck = { action: 'wait'; ms: number } | { action: 'verify' };

/**
 * Whether the pods of a node missing from the cache since `missingSince` may go: only once the
 * quarantine is over, and then only after asking the API whether the node is really gone.
 */
export function orphanCheck(missingSince: number, now: number, quarantineMs: number): OrphanCheck {
  const left = missingSince + quarantineMs - now;
  return left > 0 ? { action: 'wait', ms: left } : { action: 'verify' };
}

/** Marked for deletion before any node took it: no agent will ever finish its deletion. */
export function isUnscheduledTerminating(pod: Pod): boolean {
  return Boolean(pod.metadata?.deletionTimestamp) && !pod.spec?.nodeName;
}

/**
 * Not Ready and tainted node.kubernetes.io/out-of-service: its admin says the machine is down
 * for good, so the pods it was stopping will not be confirmed stopped by its agent.
 */
export function isOutOfService(node: Node): boolean {
  const ready = node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
  return !ready && (node.spec?.taints ?? []).some((t) => t.key === TAINT_OUT_OF_SERVICE);
}

export interface Disruption {
  reason: string;
  message: string;
}

/** Why a pod of a deleted node goes, as Kubernetes' pod GC says it. */
export const NODE_GONE: Disruption = { reason: 'DeletionByPodGC', message: 'PodGC: node no longer exists' };

/**
 * The status written before a forced deletion (markFailedAndDeletePodWithCondition): Failed,
 * since no agent is left to end the pod, with a DisruptionTarget condition saying why when
 * there is one. Undefined for a pod that already finished: it keeps its own ending.
 */
export function failedStatus(pod: Pod, now: number, disruption?: Disruption): PodStatus | undefined {
  if (isPodTerminal(pod)) return undefined;
  const status: PodStatus = { ...pod.status, phase: 'Failed' };
  if (!disruption) return status;
  const previous = pod.status?.conditions?.find((c) => c.type === 'DisruptionTarget');
  const condition: PodCondition = {
    type: 'DisruptionTarget',
    status: 'True',
    ...disruption,
    // A condition keeps its transition time while its status stays (UpdatePodCondition).
    lastTransitionTime:
      previous?.status === 'True' && previous.lastTransitionTime ? previous.lastTransitionTime : rfc3339(now),
  };
  status.conditions = [
    ...(pod.status?.conditions ?? []).filter((c) => c.type !== 'DisruptionTarget'),
    condition,
  ];
  return status;
}

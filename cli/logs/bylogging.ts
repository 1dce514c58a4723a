/**
 * Which pod of several is the best one to read logs from — kubectl's podutils.ByLogging, so
 * `labctl logs ds/NAME` picks the pod kubectl would: one on a node before an unscheduled one,
 * Running before Unknown before Pending, ready before not ready, ready for longer first, more
 * container restarts first, older first.
 */
import { isPodReady } from '../../client/api/pods.js';
import type { Pod } from '../../client/api/types.js';

/** Phases not listed rank with Running, as Go's map lookup gives 0 for a missing key. */
const PHASE_RANK: Record<string, number> = { Running: 0, Unknown: 1, Pending: 2 };

function readyTime(pod: Pod): number | undefined {
  const t = pod.status?.conditions?.find((c) => c.type === 'Ready')?.lastTransitionTime;
  return t ? Date.parse(t) : undefined;
}

function createdTime(pod: Pod): number | undefined {
  const t = pod.metadata?.creationTimestamp;
  return t ? Date.parse(t) : undefined;
}

/** kubectl's afterOrZero: `a` is later than `b`, or `a` is missing (sorting last). */
function afterOrZero(a: number | undefined, b: number | undefined): boolean {
  if (a === undefined || b === undefined) return a === undefined;
  return a > b;
}

function maxRestarts(pod: Pod): number {
  return Math.max(0, ...(pod.status?.containerStatuses ?? []).map((c) => c.restartCount ?? 0));
}

/** Whether `a` comes before `b` (ByLogging.Less). */
function before(a: Pod, b: Pod): boolean {
  const nodeA = a.spec?.nodeName ?? '';
  const nodeB = b.spec?.nodeName ?? '';
  if (nodeA !== nodeB && (!nodeA || !nodeB)) return nodeA !== '';
  const phaseA = PHASE_RANK[a.status?.phase ?? ''] ?? 0;
  const phaseB = PHASE_RANK[b.status?.phase ?? ''] ?? 0;
  if (phaseA !== phaseB) return phaseA < phaseB;
  const readyA = isPodReady(a);
  if (readyA !== isPodReady(b)) return readyA;
  if (readyA && readyTime(a) !== readyTime(b)) return afterOrZero(readyTime(b), readyTime(a));
  if (maxRestarts(a) !== maxRestarts(b)) return maxRestarts(a) > maxRestarts(b);
  if (createdTime(a) !== createdTime(b)) return afterOrZero(createdTime(b), createdTime(a));
  return false;
}

/** A comparator for Array.sort: the pod to read logs from first. */
export function byLogging(a: Pod, b: Pod): number {
  if (before(a, b)) return -1;
  return before(b, a) ? 1 : 0;
}

/** When a pod counts as active (FilterActivePods) and available (podutil.IsPodAvailable), for every controller of pods. */
import { isPodReady, isPodTerminal } from '../../../client/api/pods.js';
import type { Pod } from '../../../client/api/types.js';

/** Ready for at least minReadySeconds (podutil.IsPodAvailable). */
export function isPodAvailable(pod: Pod, minReadySeconds: number, now: number): boolean {
  if (!isPodReady(pod)) return false;
  if (minReadySeconds <= 0) return true;
  const ready = pod.status?.conditions?.find((c) => c.type === 'Ready');
  const since = ready?.lastTransitionTime ? Date.parse(ready.lastTransitionTime) : NaN;
  return Number.isFinite(since) && since + minReadySeconds * 1000 <= now;
}

/** Not finished and not being deleted (controller.FilterActivePods). */
export function isPodActive(pod: Pod): boolean {
  return !isPodTerminal(pod) && !pod.metadata?.deletionTimestamp;
}

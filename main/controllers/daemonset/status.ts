/**
 * A DaemonSet's status from the cache (updateDaemonSetStatus): per node that should run the
 * pod, whether it has one, and whether the oldest is ready, available and up to date (by hash
 * or template generation); pods on nodes that should not run one are misscheduled.
 */
import { isPodAvailable } from '../common/availability.js';
import { isPodReady } from '../../../client/api/pods.js';
import type { DaemonSet, DaemonSetStatus, Node } from '../../../client/api/types.js';
import { nodeShouldRunDaemonPod } from './eligibility.js';
import {
  byCreationThenPhase,
  isPodUpdated,
  minReadySeconds,
  templateGeneration,
  type NodeToDaemonPods,
} from './util.js';

export type DaemonSetCounts = Required<
  Pick<
    DaemonSetStatus,
    | 'desiredNumberScheduled'
    | 'currentNumberScheduled'
    | 'numberMisscheduled'
    | 'numberReady'
    | 'updatedNumberScheduled'
    | 'numberAvailable'
    | 'numberUnavailable'
  >
>;

export function daemonSetCounts(
  ds: DaemonSet,
  nodes: Node[],
  nodeToPods: NodeToDaemonPods,
  hash: string,
  now: number,
): DaemonSetCounts {
  const counts: DaemonSetCounts = {
    desiredNumberScheduled: 0,
    currentNumberScheduled: 0,
    numberMisscheduled: 0,
    numberReady: 0,
    updatedNumberScheduled: 0,
    numberAvailable: 0,
    numberUnavailable: 0,
  };
  const templateGen = templateGeneration(ds);
  for (const node of nodes) {
    const pods = nodeToPods.get(node.metadata!.name!) ?? [];
    const scheduled = pods.length > 0;
    if (!nodeShouldRunDaemonPod(node, ds).shouldRun) {
      if (scheduled) counts.numberMisscheduled++;
      continue;
    }
    counts.desiredNumberScheduled++;
    if (!scheduled) continue;
    counts.currentNumberScheduled++;
    const oldest = [...pods].sort(byCreationThenPhase)[0];
    if (isPodReady(oldest)) {
      counts.numberReady++;
      if (isPodAvailable(oldest, minReadySeconds(ds), now)) counts.numberAvailable++;
    }
    if (isPodUpdated(oldest, hash, templateGen)) counts.updatedNumberScheduled++;
  }
  counts.numberUnavailable = counts.desiredNumberScheduled - counts.numberAvailable;
  return counts;
}

/** The status to write, or undefined when the stored one already says it all (storeDaemonSetStatus). */
export function nextStatus(
  ds: DaemonSet,
  counts: DaemonSetCounts,
  updateObservedGeneration: boolean,
): DaemonSetStatus | undefined {
  const current = ds.status ?? {};
  const generation = ds.metadata?.generation ?? 0;
  const same = (Object.keys(counts) as Array<keyof DaemonSetCounts>).every(
    (k) => (current[k] ?? 0) === counts[k],
  );
  if (same && (!updateObservedGeneration || (current.observedGeneration ?? 0) >= generation))
    return undefined;
  return {
    ...current,
    ...counts,
    observedGeneration: updateObservedGeneration ? generation : current.observedGeneration,
  };
}

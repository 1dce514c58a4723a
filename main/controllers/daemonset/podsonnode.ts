/**
 * What one node needs for one DaemonSet (podsShouldBeOnNode, as in today's Kubernetes): a pod
 * created where one should run and none does; failed pods deleted — with a per-(DaemonSet,
 * node) backoff so the controller does not fight a kubelet that keeps rejecting them; extra
 * pods deleted, keeping the oldest (with surge: the oldest of each revision, until the new one
 * is available); every pod deleted where none may run. For a node that is gone: its pods not
 * yet bound (the bound ones are pod GC's).
 */
import { isPodAvailable } from '../common/availability.js';
import { isPodReady } from '../../../client/api/pods.js';
import type { DaemonSet, Node, Pod } from '../../../client/api/types.js';
import type { PerKeyBackoff } from './backoff.js';
import { nodeShouldRunDaemonPod } from './eligibility.js';
import { byCreationThenPhase, isPodUpdated, minReadySeconds, templateGeneration } from './util.js';

export interface NodePlan {
  /** A new pod should be created on this node. */
  create: boolean;
  delete: Pod[];
  /** Failed pods being deleted (each gets a FailedDaemonPod event). */
  failed: Pod[];
  /** Sync again after this long: a failed pod waits out its backoff. */
  retryAfterMs?: number;
}

export function failedPodsBackoffKey(ds: DaemonSet, nodeName: string): string {
  return `${ds.metadata?.uid}/${ds.status?.observedGeneration ?? 0}/${nodeName}`;
}

export function allowsSurge(ds: DaemonSet): boolean {
  const ru = ds.spec?.updateStrategy;
  if (ru?.type !== 'RollingUpdate') return false;
  const surge = ru.rollingUpdate?.maxSurge;
  return surge !== undefined && surge !== 0 && surge !== '0%' && surge !== '0';
}

export function podsShouldBeOnNode(
  node: Node,
  daemonPods: Pod[],
  ds: DaemonSet,
  hash: string,
  backoff: PerKeyBackoff,
  now: number,
): NodePlan {
  const plan: NodePlan = { create: false, delete: [], failed: [] };
  const { shouldRun, shouldContinueRunning } = nodeShouldRunDaemonPod(node, ds);
  const exists = daemonPods.length > 0;

  if (shouldRun && !exists) {
    plan.create = true;
    return plan;
  }
  if (!shouldContinueRunning) {
    plan.delete = daemonPods.filter((p) => !p.metadata?.deletionTimestamp);
    return plan;
  }
  if (!exists) return plan;

  const running: Pod[] = [];
  for (const pod of daemonPods) {
    if (pod.metadata?.deletionTimestamp) continue;
    const phase = pod.status?.phase;
    if (phase === 'Failed') {
      const key = failedPodsBackoffKey(ds, node.metadata!.name!);
      if (backoff.isInBackOffSinceUpdate(key, now)) {
        const wait = backoff.get(key);
        plan.retryAfterMs = plan.retryAfterMs === undefined ? wait : Math.min(plan.retryAfterMs, wait);
        continue;
      }
      backoff.next(key, now);
      plan.failed.push(pod);
      plan.delete.push(pod);
    } else if (phase === 'Succeeded') {
      // A daemon pod that ended is replaced, like a failed one but without a backoff.
      plan.delete.push(pod);
    } else {
      running.push(pod);
    }
  }

  running.sort(byCreationThenPhase);
  if (!allowsSurge(ds)) {
    plan.delete.push(...running.slice(1));
    return plan;
  }
  if (running.length <= 1) {
    if (running.length === 0 && shouldRun) plan.create = true;
    return plan;
  }
  // With surge, an old and a new pod may share the node while the new one becomes available.
  // Kubernetes tells them apart by hash alone here; by hash or generation (as the rolling
  // update does) an adopted current pod is never the old one that the update left in place.
  const generation = templateGeneration(ds);
  let oldestNew: Pod | undefined;
  let oldestOld: Pod | undefined;
  for (const pod of running) {
    if (isPodUpdated(pod, hash, generation)) {
      if (!oldestNew) {
        oldestNew = pod;
        continue;
      }
    } else if (!oldestOld) {
      oldestOld = pod;
      continue;
    }
    plan.delete.push(pod);
  }
  if (oldestNew && oldestOld) {
    if (!isPodReady(oldestOld) || isPodAvailable(oldestNew, minReadySeconds(ds), now))
      plan.delete.push(oldestOld);
  }
  return plan;
}

/**
 * Pods meant for a node that no longer exists and not yet bound (getUnscheduledPodsWithoutNode):
 * the scheduler can never place them, and pod GC only removes pods bound to a gone node, so
 * they are the DaemonSet's to delete. Bound ones are pod GC's, after its quarantine.
 */
export function unscheduledPodsWithoutNode(nodes: Node[], nodeToPods: Map<string, Pod[]>): Pod[] {
  const existing = new Set(nodes.map((n) => n.metadata?.name));
  const orphans: Pod[] = [];
  for (const [nodeName, pods] of nodeToPods) {
    if (existing.has(nodeName)) continue;
    orphans.push(...pods.filter((p) => !p.spec?.nodeName && !p.metadata?.deletionTimestamp));
  }
  return orphans;
}

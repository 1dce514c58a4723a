/**
 * The RollingUpdate strategy (rollingUpdate in today's Kubernetes), as a decision over the
 * cache: which old pods to delete and on which nodes to create new ones.
 *
 * Without surge: delete old pods that are not available, plus as many available ones as keep
 * the unavailable count within maxUnavailable; the manage step then creates their
 * replacements. With surge: create a new pod beside an old one (at most maxSurge at a time,
 * at once where the old pod is unavailable) and delete the old pod once the new one is
 * available. Deleted pods do not count as unavailable, so an update progresses while nodes
 * are down.
 */
import { isPodAvailable } from '../common/availability.js';
import { scaledValue } from '../common/intorpercent.js';
import type { DaemonSet, Node, Pod } from '../../../client/api/types.js';
import { nodeShouldRunDaemonPod } from './eligibility.js';
import { isPodUpdated, minReadySeconds, templateGeneration, type NodeToDaemonPods } from './util.js';

export interface UpdatePlan {
  deletePods: Pod[];
  createOnNodes: string[];
}

export interface UpdateLimits {
  maxSurge: number;
  maxUnavailable: number;
  desiredNumberScheduled: number;
}

/**
 * The allowed surge and unavailability for the nodes that should run the pod
 * (updatedDesiredNodeCounts); also adds an empty entry to `nodeToPods` for each such node.
 */
export function updateLimits(ds: DaemonSet, nodes: Node[], nodeToPods: NodeToDaemonPods): UpdateLimits {
  let desired = 0;
  for (const node of nodes) {
    if (!nodeShouldRunDaemonPod(node, ds).shouldRun) continue;
    desired++;
    if (!nodeToPods.has(node.metadata!.name!)) nodeToPods.set(node.metadata!.name!, []);
  }
  const ru = ds.spec?.updateStrategy?.rollingUpdate;
  let maxUnavailable = scaledValue(
    ru?.maxUnavailable,
    desired,
    'spec.updateStrategy.rollingUpdate.maxUnavailable',
  );
  const maxSurge = scaledValue(ru?.maxSurge, desired, 'spec.updateStrategy.rollingUpdate.maxSurge');
  // Neither surge nor unavailability allowed would never progress: accept one unavailable.
  if (desired > 0 && maxUnavailable === 0 && maxSurge === 0) maxUnavailable = 1;
  return { maxSurge, maxUnavailable, desiredNumberScheduled: desired };
}

/**
 * At most one new and one old live pod on the node (findUpdatedPodsOnNode); undefined for
 * more. New is by hash or template generation (isPodUpdated).
 */
export function updatedPodsOnNode(
  pods: Pod[],
  hash: string,
  generation: string | undefined,
): { newPod?: Pod; oldPod?: Pod } | undefined {
  let newPod: Pod | undefined;
  let oldPod: Pod | undefined;
  for (const pod of pods) {
    if (pod.metadata?.deletionTimestamp) continue;
    if (isPodUpdated(pod, hash, generation)) {
      if (newPod) return undefined;
      newPod = pod;
    } else {
      if (oldPod) return undefined;
      oldPod = pod;
    }
  }
  return { newPod, oldPod };
}

export function rollingUpdatePlan(
  ds: DaemonSet,
  nodes: Node[],
  nodeToPods: NodeToDaemonPods,
  hash: string,
  now: number,
): UpdatePlan {
  const pods = new Map(nodeToPods);
  const { maxSurge, maxUnavailable, desiredNumberScheduled } = updateLimits(ds, nodes, pods);
  const minReady = minReadySeconds(ds);
  const generation = templateGeneration(ds);
  const available = (p: Pod) => isPodAvailable(p, minReady, now);
  const nodeByName = new Map(nodes.map((n) => [n.metadata!.name!, n]));
  const shouldRunOn = (name: string) => {
    const node = nodeByName.get(name);
    return !!node && nodeShouldRunDaemonPod(node, ds).shouldRun;
  };

  if (maxSurge === 0) {
    let numUnavailable = 0;
    const replacements: Pod[] = [];
    const candidates: Pod[] = [];
    for (const [, podsOnNode] of [...pods].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      const found = updatedPodsOnNode(podsOnNode, hash, generation);
      if (!found) {
        // Excess pods: the manage step prunes them; count the node as unavailable meanwhile.
        numUnavailable++;
        continue;
      }
      const { newPod, oldPod } = found;
      if ((!oldPod && !newPod) || (oldPod && newPod)) {
        numUnavailable++;
      } else if (newPod) {
        if (!available(newPod)) numUnavailable++;
      } else if (oldPod) {
        if (!available(oldPod)) {
          replacements.push(oldPod);
          numUnavailable++;
        } else if (numUnavailable < maxUnavailable) {
          candidates.push(oldPod);
        }
      }
    }
    const remaining = Math.min(Math.max(0, maxUnavailable - numUnavailable), candidates.length);
    return { deletePods: [...replacements, ...candidates.slice(0, remaining)], createOnNodes: [] };
  }

  const deletePods: Pod[] = [];
  const shouldNotRun: Pod[] = [];
  const candidateNodes: string[] = [];
  const allowedNodes: string[] = [];
  let numSurge = 0;
  let numAvailable = 0;
  for (const [nodeName, podsOnNode] of [...pods].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const found = updatedPodsOnNode(podsOnNode, hash, generation);
    if (!found) {
      numSurge++;
      continue;
    }
    const { newPod, oldPod } = found;
    if (oldPod ? available(oldPod) : newPod && available(newPod)) numAvailable++;
    if (!oldPod) continue;
    if (!newPod) {
      if (!available(oldPod)) {
        if (!shouldRunOn(nodeName)) deletePods.push(oldPod);
        else allowedNodes.push(nodeName);
      } else if (!shouldRunOn(nodeName)) {
        shouldNotRun.push(oldPod);
      } else if (numSurge < maxSurge) {
        candidateNodes.push(nodeName);
      }
      continue;
    }
    // Already surged here: wait for the new pod, then retire the old one.
    if (!available(newPod)) numSurge++;
    else deletePods.push(oldPod);
  }
  // Full availability is the point of surge: retire pods on nodes that no longer qualify only
  // while more are available than desired.
  const deletable = Math.min(Math.max(0, numAvailable - desiredNumberScheduled), shouldNotRun.length);
  deletePods.push(...shouldNotRun.slice(0, deletable));
  const remainingSurge = Math.min(Math.max(0, maxSurge - numSurge), candidateNodes.length);
  return { deletePods, createOnNodes: [...allowedNodes, ...candidateNodes.slice(0, remainingSurge)] };
}

/**
 * Whether a node should run a DaemonSet's pod (NodeShouldRunDaemonPod, as in today's
 * Kubernetes): the template's nodeName, nodeSelector and required node affinity, and the
 * node's taints against the template's tolerations plus those every daemon pod gets.
 *
 * - shouldRun: a pod should be placed there now.
 * - shouldContinueRunning: a pod already there may stay. An untolerated NoSchedule taint keeps
 *   a running pod but places no new one; an untolerated NoExecute taint removes it.
 *
 * Resources are not checked: the daemon pod is created and the scheduler keeps it Pending with
 * its reason until the node has room (Kubernetes ≥ 1.12; the seed's older controller checked
 * resources itself and "suspended" such nodes).
 */
import { podMatchesNodeSelectorAndAffinity } from '../../../client/api/nodeaffinity.js';
import {
  TAINT_DISK_PRESSURE,
  TAINT_MEMORY_PRESSURE,
  TAINT_NETWORK_UNAVAILABLE,
  TAINT_NOT_READY,
  TAINT_PID_PRESSURE,
  TAINT_UNREACHABLE,
  TAINT_UNSCHEDULABLE,
  untoleratedTaints,
} from '../../../client/api/taints.js';
import type { DaemonSet, Node, Pod, Toleration } from '../../../client/api/types.js';

export interface Eligibility {
  shouldRun: boolean;
  shouldContinueRunning: boolean;
}

/** Tolerations added to every daemon pod (AddOrUpdateDaemonPodTolerations). */
export function daemonPodTolerations(hostNetwork: boolean): Toleration[] {
  const tolerations: Toleration[] = [
    // No tolerationSeconds: a daemon pod is not evicted from a node that is not ready or unreachable.
    { key: TAINT_NOT_READY, operator: 'Exists', effect: 'NoExecute' },
    { key: TAINT_UNREACHABLE, operator: 'Exists', effect: 'NoExecute' },
    { key: TAINT_DISK_PRESSURE, operator: 'Exists', effect: 'NoSchedule' },
    { key: TAINT_MEMORY_PRESSURE, operator: 'Exists', effect: 'NoSchedule' },
    { key: TAINT_PID_PRESSURE, operator: 'Exists', effect: 'NoSchedule' },
    { key: TAINT_UNSCHEDULABLE, operator: 'Exists', effect: 'NoSchedule' },
  ];
  if (hostNetwork)
    tolerations.push({ key: TAINT_NETWORK_UNAVAILABLE, operator: 'Exists', effect: 'NoSchedule' });
  return tolerations;
}

/** The template's tolerations with the daemon ones added where the same key and effect is not already tolerated. */
export function withDaemonTolerations(
  tolerations: Toleration[] | undefined,
  hostNetwork: boolean,
): Toleration[] {
  const result = [...(tolerations ?? [])];
  for (const t of daemonPodTolerations(hostNetwork)) {
    const i = result.findIndex((x) => x.key === t.key && x.effect === t.effect);
    if (i >= 0) result[i] = t;
    else result.push(t);
  }
  return result;
}

/** The pod the DaemonSet would create for a node, for checking fit (NewPod). */
export function podForNode(ds: DaemonSet, nodeName: string): Pod {
  const spec = ds.spec?.template?.spec ?? {};
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { ...ds.spec?.template?.metadata, namespace: ds.metadata?.namespace },
    spec: {
      ...spec,
      nodeName,
      tolerations: withDaemonTolerations(spec.tolerations, spec.hostNetwork ?? false),
    },
  };
}

/**
 * Remembered per (node, DaemonSet) pair of frozen objects — the informers' cached objects,
 * which never change: a sync asks about every node several times (manage, the rolling update,
 * the status), and at thousands of nodes building the would-be pod each time was most of it.
 * One lookup per node, then a short list of the DaemonSet versions asked about (a WeakMap per
 * node cost a second lookup, and left a weak table per Node version for the collector).
 */
const remembered = new WeakMap<Node, Array<{ ds: DaemonSet; eligibility: Eligibility }>>();
/** DaemonSet versions remembered per node; beyond them the oldest is decided again (the same answer, more slowly). */
const REMEMBERED_PER_NODE = 16;

export function nodeShouldRunDaemonPod(node: Node, ds: DaemonSet): Eligibility {
  if (!Object.isFrozen(node) || !Object.isFrozen(ds)) return decide(node, ds);
  let known = remembered.get(node);
  if (known) {
    for (const k of known) if (k.ds === ds) return k.eligibility;
  } else remembered.set(node, (known = []));
  const eligibility = decide(node, ds);
  if (known.length >= REMEMBERED_PER_NODE) known.shift();
  known.push({ ds, eligibility });
  return eligibility;
}

function decide(node: Node, ds: DaemonSet): Eligibility {
  const templateNode = ds.spec?.template?.spec?.nodeName;
  if (templateNode && templateNode !== node.metadata?.name)
    return { shouldRun: false, shouldContinueRunning: false };
  const pod = podForNode(ds, node.metadata!.name!);
  if (!podMatchesNodeSelectorAndAffinity(pod, node))
    return { shouldRun: false, shouldContinueRunning: false };
  const taints = node.spec?.taints;
  if (untoleratedTaints(taints, pod.spec?.tolerations, ['NoExecute']).length) {
    return { shouldRun: false, shouldContinueRunning: false };
  }
  if (untoleratedTaints(taints, pod.spec?.tolerations, ['NoSchedule']).length) {
    return { shouldRun: false, shouldContinueRunning: true };
  }
  return { shouldRun: true, shouldContinueRunning: true };
}

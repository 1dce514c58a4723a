/**
 * Whether this node can run a pod it was given (the kubelet's admission: GeneralPredicates
 * and NoExecute taints). The scheduler already checked, but the node is the last word: its
 * allocatable may have shrunk, or a pod may have been bound directly with spec.nodeName.
 * A refused pod is marked Failed with the reason, as Kubernetes does.
 */
import { podMatchesNodeSelectorAndAffinity } from '../../client/api/nodeaffinity.js';
import { nodeAllocatable, podRequests, zeroResources, addInto } from '../../client/api/resources.js';
import { untoleratedTaints } from '../../client/api/taints.js';
import type { Node, Pod } from '../../client/api/types.js';

export type Admission = { admit: true } | { admit: false; reason: string; message: string };

const RESOURCES = [
  ['cpu', 'milliCPU'],
  ['memory', 'memory'],
  ['ephemeral-storage', 'ephemeralStorage'],
] as const;

/** `admitted`: the pods this node already runs (not terminal). */
export function admitPod(pod: Pod, node: Node, admitted: Pod[]): Admission {
  const nodeName = node.metadata?.name;
  if (pod.spec?.nodeName && pod.spec.nodeName !== nodeName) {
    return {
      admit: false,
      reason: 'NodeName',
      message: `Pod was rejected: it is bound to node ${pod.spec.nodeName}, not ${nodeName}`,
    };
  }
  if (!podMatchesNodeSelectorAndAffinity(pod, node)) {
    return {
      admit: false,
      reason: 'NodeAffinity',
      message:
        "Pod was rejected: Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector",
    };
  }
  const taint = untoleratedTaints(node.spec?.taints, pod.spec?.tolerations, ['NoExecute'])[0];
  if (taint) {
    return {
      admit: false,
      reason: 'Taint',
      message: `Pod was rejected: Predicate TaintToleration failed: node(s) had untolerated taint {${taint.key}: ${taint.value ?? ''}}`,
    };
  }
  const allocatable = nodeAllocatable(node);
  const used = zeroResources();
  for (const p of admitted) addInto(used, podRequests(p));
  if (used.pods + 1 > allocatable.pods) {
    return {
      admit: false,
      reason: 'OutOfpods',
      message: `Pod was rejected: Node didn't have enough resource: pods, requested: 1, used: ${used.pods}, capacity: ${allocatable.pods}`,
    };
  }
  const wanted = podRequests(pod);
  for (const [name, field] of RESOURCES) {
    if (wanted[field] > 0 && used[field] + wanted[field] > allocatable[field]) {
      return {
        admit: false,
        reason: `OutOf${name}`,
        message: `Pod was rejected: Node didn't have enough resource: ${name}, requested: ${wanted[field]}, used: ${used[field]}, capacity: ${allocatable[field]}`,
      };
    }
  }
  return { admit: true };
}

/**
 * The scheduler's bookkeeping of what is placed on each node (Kubernetes' NodeInfo), on top of
 * the shared request and allocatable arithmetic in client/api/resources.ts.
 */
import {
  addInto,
  nodeAllocatable,
  podNonZeroRequests,
  podRequests,
  zeroResources,
} from '../../../../client/api/resources.js';
import type { Node, Pod } from '../../../../client/api/types.js';
import { metaNamespaceKey } from '../../../../client/cache/keys.js';
import type { NodeInfo, PodInfo } from './types.js';

export function podInfo(pod: Pod): PodInfo {
  return {
    pod,
    key: metaNamespaceKey(pod),
    requests: podRequests(pod),
    nonZeroRequests: podNonZeroRequests(pod),
  };
}

export function newNodeInfo(node: Node, pods: Iterable<PodInfo> = []): NodeInfo {
  const info: NodeInfo = {
    node,
    name: node.metadata?.name ?? '',
    allocatable: nodeAllocatable(node),
    requested: zeroResources(),
    nonZeroRequested: zeroResources(),
    pods: new Map(),
  };
  for (const p of pods) addPod(info, p);
  return info;
}

/** Points the node info at a newer version of its node, keeping its pods. */
export function setNode(info: NodeInfo, node: Node): void {
  info.node = node;
  info.name = node.metadata?.name ?? '';
  info.allocatable = nodeAllocatable(node);
}

/** Counts the pod on the node; a pod already there under the same key is replaced, not counted twice. */
export function addPod(info: NodeInfo, pod: PodInfo): void {
  removePod(info, pod.key);
  info.pods.set(pod.key, pod);
  addInto(info.requested, pod.requests);
  addInto(info.nonZeroRequested, pod.nonZeroRequests);
}

/** Stops counting the pod; returns what was removed, if it was there. */
export function removePod(info: NodeInfo, key: string): PodInfo | undefined {
  const existing = info.pods.get(key);
  if (!existing) return undefined;
  info.pods.delete(key);
  addInto(info.requested, existing.requests, -1);
  addInto(info.nonZeroRequested, existing.nonZeroRequests, -1);
  return existing;
}

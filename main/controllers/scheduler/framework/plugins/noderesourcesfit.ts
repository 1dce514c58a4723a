/**
 * NodeResourcesFit: the pod's requests must fit in what the node's pods leave of its
 * allocatable cpu, memory, ephemeral storage and pod slots; among the nodes that fit, those
 * with the most cpu and memory left score highest (the LeastAllocated strategy).
 */
import { MAX_NODE_SCORE, type FilterPlugin, type ScorePlugin } from '../types.js';

export const NODE_RESOURCES_FIT = 'NodeResourcesFit';
export const REASON_TOO_MANY_PODS = 'Too many pods';
export const REASON_INSUFFICIENT_CPU = 'Insufficient cpu';
export const REASON_INSUFFICIENT_MEMORY = 'Insufficient memory';
export const REASON_INSUFFICIENT_EPHEMERAL_STORAGE = 'Insufficient ephemeral-storage';

/** The share of `capacity` left free after `requested`, 0..100 (Kubernetes' leastRequestedScore). */
export function leastRequestedScore(requested: number, capacity: number): number {
  if (capacity === 0 || requested > capacity) return 0;
  return Math.trunc(((capacity - requested) * MAX_NODE_SCORE) / capacity);
}

export const nodeResourcesFit: FilterPlugin & ScorePlugin = {
  name: NODE_RESOURCES_FIT,
  weight: 1,
  /** Every shortfall, not just the first, so the failure summary names them all. */
  filter(pod, node) {
    const reasons: string[] = [];
    if (node.pods.size + 1 > node.allocatable.pods) reasons.push(REASON_TOO_MANY_PODS);
    const want = pod.requests;
    const free = {
      milliCPU: node.allocatable.milliCPU - node.requested.milliCPU,
      memory: node.allocatable.memory - node.requested.memory,
      ephemeralStorage: node.allocatable.ephemeralStorage - node.requested.ephemeralStorage,
    };
    // A resource the pod does not ask for cannot be short, even on an overcommitted node.
    if (want.milliCPU > 0 && want.milliCPU > free.milliCPU) reasons.push(REASON_INSUFFICIENT_CPU);
    if (want.memory > 0 && want.memory > free.memory) reasons.push(REASON_INSUFFICIENT_MEMORY);
    if (want.ephemeralStorage > 0 && want.ephemeralStorage > free.ephemeralStorage) {
      reasons.push(REASON_INSUFFICIENT_EPHEMERAL_STORAGE);
    }
    return reasons.length > 0 ? reasons : undefined;
  },
  /**
   * The mean of the cpu and memory leastRequestedScores, counting the pod and every pod on the
   * node with the scoring defaults for unset requests, so that pods without requests still
   * spread out.
   */
  score(pod, node) {
    const cpu = leastRequestedScore(
      node.nonZeroRequested.milliCPU + pod.nonZeroRequests.milliCPU,
      node.allocatable.milliCPU,
    );
    const memory = leastRequestedScore(
      node.nonZeroRequested.memory + pod.nonZeroRequests.memory,
      node.allocatable.memory,
    );
    return Math.trunc((cpu + memory) / 2);
  },
};

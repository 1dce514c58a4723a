/**
 * NodeResourcesBalancedAllocation: prefers nodes whose cpu and memory would be used in equal
 * shares once the pod is there, so that neither runs out while the other sits idle.
 */
import { MAX_NODE_SCORE, type ScorePlugin } from '../types.js';

export const NODE_RESOURCES_BALANCED_ALLOCATION = 'NodeResourcesBalancedAllocation';

/**
 * (1 - standard deviation of the used fractions) × 100, truncated. A resource the node has
 * none of is left out; a fraction above 1 counts as 1.
 */
export function balancedResourceScore(requested: readonly number[], allocatable: readonly number[]): number {
  const fractions: number[] = [];
  requested.forEach((r, i) => {
    if (allocatable[i] !== 0) fractions.push(Math.min(r / allocatable[i], 1));
  });
  let std = 0;
  if (fractions.length === 2) {
    std = Math.abs(fractions[0] - fractions[1]) / 2;
  } else if (fractions.length > 2) {
    const mean = fractions.reduce((a, b) => a + b, 0) / fractions.length;
    std = Math.sqrt(fractions.reduce((a, f) => a + (f - mean) ** 2, 0) / fractions.length);
  }
  return Math.trunc((1 - std) * MAX_NODE_SCORE);
}

export const nodeResourcesBalancedAllocation: ScorePlugin = {
  name: NODE_RESOURCES_BALANCED_ALLOCATION,
  weight: 1,
  /**
   * Counts actual requests, not the scoring defaults (Kubernetes' useRequested for this
   * plugin): the defaults would make an idle node look busy and skew its balance. A pod that
   * requests neither cpu nor memory leaves every node's balance where it was, and favouring
   * the already balanced node would pile such pods onto it, so Kubernetes skips the plugin
   * for them; 0 on every node has the same effect.
   */
  score(pod, node) {
    const want = pod.requests;
    if (want.milliCPU === 0 && want.memory === 0) return 0;
    return balancedResourceScore(
      [node.requested.milliCPU + want.milliCPU, node.requested.memory + want.memory],
      [node.allocatable.milliCPU, node.allocatable.memory],
    );
  },
};

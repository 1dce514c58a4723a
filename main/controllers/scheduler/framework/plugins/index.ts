/** The default plugin set, in the order Kubernetes' default profile runs them. */
import type { FilterPlugin, ScorePlugin } from '../types.js';
import { nodeResourcesBalancedAllocation } from './balancedallocation.js';
import { nodeAffinity } from './nodeaffinity.js';
import { nodeName } from './nodename.js';
import { nodeResourcesFit } from './noderesourcesfit.js';
import { nodeUnschedulable } from './nodeunschedulable.js';
import { taintToleration } from './tainttoleration.js';

export {
  nodeResourcesBalancedAllocation,
  nodeAffinity,
  nodeName,
  nodeResourcesFit,
  nodeUnschedulable,
  taintToleration,
};

/**
 * Kubernetes' order, cheapest first. A scheduler that stops at a node's first failing filter
 * then reports the same reason Kubernetes would.
 */
export const DEFAULT_FILTERS: FilterPlugin[] = [
  nodeUnschedulable,
  nodeName,
  taintToleration,
  nodeAffinity,
  nodeResourcesFit,
];

export const DEFAULT_SCORES: ScorePlugin[] = [
  taintToleration,
  nodeAffinity,
  nodeResourcesFit,
  nodeResourcesBalancedAllocation,
];

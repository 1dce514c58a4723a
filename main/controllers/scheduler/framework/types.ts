/**
 * The scheduling framework's vocabulary (after Kubernetes' scheduler framework): what a
 * plugin sees of a pod and of a node, and what filters and scores answer. Plugins are pure:
 * they read these and return values; the scheduler does everything else.
 */
import type { Resources } from '../../../../client/api/resources.js';
import type { Node, Pod } from '../../../../client/api/types.js';

export type { Resources };

export interface PodInfo {
  pod: Pod;
  /** "namespace/name". */
  key: string;
  /** What the pod requests (max of init containers and the sum of containers, plus overhead); pods = 1. */
  requests: Resources;
  /** The same with Kubernetes' defaults for unset cpu (100m) and memory (200Mi), used only for scoring. */
  nonZeroRequests: Resources;
}

export interface NodeInfo {
  node: Node;
  name: string;
  allocatable: Resources;
  /** Sum of the requests of the pods on the node (bound, or assumed and not yet bound). */
  requested: Resources;
  /** The same with the scoring defaults. */
  nonZeroRequested: Resources;
  /** Pods on the node by key. */
  pods: Map<string, PodInfo>;
}

/**
 * A filter's answer for one node: undefined when the pod fits, otherwise the reasons it does
 * not, in the words of Kubernetes' FailedScheduling summaries ("Insufficient cpu",
 * "node(s) had untolerated taint {node.kubernetes.io/unreachable: }").
 */
export type FilterResult = string[] | undefined;

export interface FilterPlugin {
  name: string;
  filter(pod: PodInfo, node: NodeInfo): FilterResult;
}

export interface ScorePlugin {
  name: string;
  /** How much this plugin's normalized score counts (Kubernetes' default weights). */
  weight: number;
  /** A raw score for the node. */
  score(pod: PodInfo, node: NodeInfo): number;
  /** Turns the raw scores of every feasible node into 0..100, in place (omit when already 0..100). */
  normalize?(scores: number[]): void;
}

export const MAX_NODE_SCORE = 100;

/** NodeAffinity: spec.nodeSelector and required node affinity filter; preferred affinity scores. */
import {
  podMatchesNodeSelectorAndAffinity,
  preferredAffinityScore,
} from '../../../../../client/api/nodeaffinity.js';
import type { FilterPlugin, ScorePlugin } from '../types.js';
import { defaultNormalizeScore } from './normalizescore.js';

export const NODE_AFFINITY = 'NodeAffinity';
export const REASON_NODE_AFFINITY = "node(s) didn't match Pod's node affinity/selector";

export const nodeAffinity: FilterPlugin & ScorePlugin = {
  name: NODE_AFFINITY,
  weight: 2,
  filter(pod, node) {
    return podMatchesNodeSelectorAndAffinity(pod.pod, node.node) ? undefined : [REASON_NODE_AFFINITY];
  },
  /** The sum of the weights of the preferred terms the node matches. */
  score(pod, node) {
    return preferredAffinityScore(pod.pod, node.node);
  },
  normalize(scores) {
    defaultNormalizeScore(scores, false);
  },
};

/**
 * TaintToleration: NoSchedule and NoExecute taints the pod does not tolerate keep it off a
 * node; untolerated PreferNoSchedule taints make a node less attractive.
 */
import { tolerates, untoleratedTaints } from '../../../../../client/api/taints.js';
import type { Taint, Toleration } from '../../../../../client/api/types.js';
import type { FilterPlugin, ScorePlugin } from '../types.js';
import { defaultNormalizeScore } from './normalizescore.js';

export const TAINT_TOLERATION = 'TaintToleration';

const FILTERED_EFFECTS = ['NoSchedule', 'NoExecute'];

/** Kubernetes' wording, key and value as they are ("{key: }" for a taint without a value). */
export function untoleratedTaintReason(taint: Taint): string {
  return `node(s) had untolerated taint {${taint.key ?? ''}: ${taint.value ?? ''}}`;
}

/** How many of the node's PreferNoSchedule taints the tolerations leave uncovered. */
export function countIntolerablePreferNoSchedule(
  taints: readonly Taint[] | undefined,
  tolerations: readonly Toleration[] | undefined,
): number {
  // Only tolerations that can apply to PreferNoSchedule (that effect, or every effect) count.
  const relevant = (tolerations ?? []).filter((t) => !t.effect || t.effect === 'PreferNoSchedule');
  return (taints ?? []).filter(
    (taint) => taint.effect === 'PreferNoSchedule' && !relevant.some((t) => tolerates(t, taint)),
  ).length;
}

export const taintToleration: FilterPlugin & ScorePlugin = {
  name: TAINT_TOLERATION,
  weight: 3,
  filter(pod, node) {
    const [first] = untoleratedTaints(node.node.spec?.taints, pod.pod.spec?.tolerations, FILTERED_EFFECTS);
    return first ? [untoleratedTaintReason(first)] : undefined;
  },
  /** A count of intolerable taints: higher is worse until normalize turns it around. */
  score(pod, node) {
    return countIntolerablePreferNoSchedule(node.node.spec?.taints, pod.pod.spec?.tolerations);
  },
  normalize(scores) {
    defaultNormalizeScore(scores, true);
  },
};

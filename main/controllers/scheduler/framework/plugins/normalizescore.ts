/** Score normalization shared by the plugins whose raw scores are counts (Kubernetes' helper package). */
import { MAX_NODE_SCORE } from '../types.js';

/**
 * Scales raw scores to 0..MAX_NODE_SCORE by the highest one, in place, with integer division
 * as Kubernetes' DefaultNormalizeScore does. `reverse` turns "more is worse" counts around.
 * When every score is 0 nothing distinguishes the nodes: they all stay 0, or all get
 * MAX_NODE_SCORE when reversed (nothing to hold against any of them).
 */
export function defaultNormalizeScore(scores: number[], reverse: boolean): void {
  let max = 0;
  for (const s of scores) if (s > max) max = s;
  if (max === 0) {
    if (reverse) scores.fill(MAX_NODE_SCORE);
    return;
  }
  for (let i = 0; i < scores.length; i++) {
    const scaled = Math.trunc((MAX_NODE_SCORE * scores[i]) / max);
    scores[i] = reverse ? MAX_NODE_SCORE - scaled : scaled;
  }
}

/** NodeAffinity: spec.nodeSelector and required node affinity filter; preferred affinity scores. */
import type { Pod } from '../../../../../client/api/types.js';
import {
  NODE_FIELD_METADATA_NAME,
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

/**
 * NodeAffinity's PreFilter: when every required term names nodes by metadata.name (as a
 * DaemonSet's pods do), only those nodes can fit, so only they are filtered — not all 1,000.
 * Undefined when the affinity does not narrow the nodes down that way.
 */
export function nodeNamesFromAffinity(pod: Pod): Set<string> | undefined {
  const terms =
    pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  if (!terms?.length) return undefined;
  const names = new Set<string>();
  for (const term of terms) {
    const byName = (term.matchFields ?? []).filter(
      (r) => r.key === NODE_FIELD_METADATA_NAME && r.operator === 'In',
    );
    // A term that does not pin names could match any node.
    if (!byName.length) return undefined;
    // Several name requirements in one term must all hold: their intersection.
    let termNames = new Set(byName[0].values ?? []);
    for (const r of byName.slice(1)) termNames = new Set([...termNames].filter((n) => r.values?.includes(n)));
    for (const n of termNames) names.add(n);
  }
  return names;
}

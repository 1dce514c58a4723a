/**
 * Node selectors and node affinity (Kubernetes' component-helpers nodeaffinity package),
 * shared by the scheduler and the DaemonSet controller so both place pods by the same rules.
 *
 * A term's matchExpressions test the node's labels with In, NotIn, Exists, DoesNotExist, Gt
 * and Lt; its matchFields test `metadata.name` with In and NotIn (exactly one value each).
 * Everything in a term is ANDed, terms are ORed. A requirement Kubernetes would refuse to
 * parse (unknown operator, bad key or value, Gt/Lt without exactly one integer) makes its
 * whole term match nothing, while the other terms are still tried.
 */
import {
  labelSelectorFromSet,
  requirementMatches,
  validateLabelRequirement,
  type LabelSelectorOperator,
} from './selectors.js';
import type { Node, NodeSelectorRequirement, NodeSelectorTerm, Pod } from './types.js';

/** The one node field matchFields can name. */
export const NODE_FIELD_METADATA_NAME = 'metadata.name';

const LABEL_OPERATORS: Record<string, LabelSelectorOperator> = {
  In: 'in',
  NotIn: 'notin',
  Exists: 'exists',
  DoesNotExist: '!',
  Gt: 'gt',
  Lt: 'lt',
};

/** true or false when the requirement parses, undefined when Kubernetes would reject it. */
function labelRequirementMatches(
  requirement: NodeSelectorRequirement,
  labels: Record<string, string>,
): boolean | undefined {
  const operatorName = requirement.operator ?? '';
  const operator = Object.prototype.hasOwnProperty.call(LABEL_OPERATORS, operatorName)
    ? LABEL_OPERATORS[operatorName]
    : undefined;
  if (!operator) return undefined;
  const key = requirement.key ?? '';
  const values = requirement.values ?? [];
  if (validateLabelRequirement(key, operator, values).length > 0) return undefined;
  return requirementMatches({ key, operator, values }, labels);
}

/** As labelRequirementMatches, for matchFields (fields.OneTerm(Not)EqualSelector). */
function fieldRequirementMatches(
  requirement: NodeSelectorRequirement,
  fields: ReadonlyMap<string, string>,
): boolean | undefined {
  const values = requirement.values ?? [];
  if ((requirement.operator !== 'In' && requirement.operator !== 'NotIn') || values.length !== 1) {
    return undefined;
  }
  // A field the node does not have reads as "", as in a Kubernetes fields.Set.
  const equal = (fields.get(requirement.key ?? '') ?? '') === values[0];
  return requirement.operator === 'In' ? equal : !equal;
}

function nodeFields(node: Node): ReadonlyMap<string, string> {
  const name = node.metadata?.name;
  return new Map(name ? [[NODE_FIELD_METADATA_NAME, name]] : []);
}

function termMatches(
  term: NodeSelectorTerm,
  labels: Record<string, string>,
  fields: ReadonlyMap<string, string>,
): boolean {
  const expressions = term.matchExpressions ?? [];
  const fieldRequirements = term.matchFields ?? [];
  if (expressions.length === 0 && fieldRequirements.length === 0) return false;
  // Evaluate everything first: an invalid requirement fails the term even after a mismatch.
  const labelResults = expressions.map((r) => labelRequirementMatches(r, labels));
  const fieldResults = fieldRequirements.map((r) => fieldRequirementMatches(r, fields));
  if (labelResults.includes(undefined) || fieldResults.includes(undefined)) return false;
  if (labelResults.includes(false)) return false;
  // Kubernetes skips matchFields for a node without a name rather than failing the term.
  if (fields.size > 0 && fieldResults.includes(false)) return false;
  return true;
}

/** Whether one term (its expressions and fields ANDed) selects the node. */
export function matchesNodeSelectorTerm(node: Node, term: NodeSelectorTerm): boolean {
  return termMatches(term, node.metadata?.labels ?? {}, nodeFields(node));
}

/** Whether any of the terms selects the node; no terms select nothing. */
export function matchesNodeSelectorTerms(
  node: Node,
  terms: readonly NodeSelectorTerm[] | undefined,
): boolean {
  const labels = node.metadata?.labels ?? {};
  const fields = nodeFields(node);
  return (terms ?? []).some((term) => termMatches(term, labels, fields));
}

/**
 * Whether the pod may run on the node by its spec.nodeSelector (every label equal) and its
 * required node affinity (GetRequiredNodeAffinity(pod).Match(node)). A required affinity
 * that is present with no terms admits no node.
 */
export function podMatchesNodeSelectorAndAffinity(pod: Pod, node: Node): boolean {
  const nodeSelector = pod.spec?.nodeSelector;
  if (nodeSelector && !labelSelectorFromSet(nodeSelector).matches(node.metadata?.labels)) return false;
  const required = pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  if (required) return matchesNodeSelectorTerms(node, required.nodeSelectorTerms);
  return true;
}

/** The sum of the weights of the pod's preferred node-affinity terms that select the node. */
export function preferredAffinityScore(pod: Pod, node: Node): number {
  const preferred = pod.spec?.affinity?.nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? [];
  const labels = node.metadata?.labels ?? {};
  const fields = nodeFields(node);
  let score = 0;
  for (const term of preferred) {
    const weight = term.weight ?? 0;
    if (weight !== 0 && term.preference && termMatches(term.preference, labels, fields)) score += weight;
  }
  return score;
}

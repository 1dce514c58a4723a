/**
 * What the DaemonSet controller's decisions share (Kubernetes' controller/daemon/util): the
 * revision-hash and template-generation labels, pod readiness and availability,
 * int-or-percent scaling, and which node a daemon pod is meant for.
 */
import type { DaemonSet, Pod } from '../../../client/api/types.js';
import { NODE_FIELD_METADATA_NAME } from '../../../client/api/nodeaffinity.js';

export const REVISION_HASH_LABEL = 'controller-revision-hash';
/**
 * The DaemonSet's template generation, kept by the apiserver ("1" at create, one more on each
 * template change). apps/v1 has no spec.templateGeneration field, so, as in Kubernetes, the
 * value lives in this annotation.
 */
export const TEMPLATE_GENERATION_ANNOTATION = 'deprecated.daemonset.template.generation';
/** The template generation a daemon pod was created from (extensions' DaemonSetTemplateGenerationKey). */
export const TEMPLATE_GENERATION_LABEL = 'pod-template-generation';

const INT64_MAX = 2n ** 63n - 1n;

/**
 * The template generation as the decimal the pod label carries (GetTemplateGeneration, then
 * fmt.Sprint), or undefined when the annotation is absent or is not a 64-bit integer: the
 * controller then goes by the revision hash alone. (Kubernetes' rolling update stops on such a
 * value instead; the apiserver refuses one, so only a DaemonSet stored before the apiserver
 * kept the generation can lack a readable one, and hashes serve it as they did.)
 */
export function templateGeneration(ds: DaemonSet): string | undefined {
  const value = ds.metadata?.annotations?.[TEMPLATE_GENERATION_ANNOTATION];
  if (value === undefined || !/^[+-]?\d+$/.test(value)) return undefined;
  const n = BigInt(value);
  return n > INT64_MAX || n < -INT64_MAX - 1n ? undefined : n.toString();
}

/** The DaemonSet's pods per node name; nodes without pods may be absent. */
export type NodeToDaemonPods = Map<string, Pod[]>;

/**
 * The pod was made from the current template (util.IsPodUpdated): it carries the current
 * revision's hash, or the DaemonSet's template generation. The generation matters for pods
 * another controller made from the same template — adopted after a restore or a migration,
 * their hash is in another format, but their generation label says they are current, so a
 * rolling update leaves them alone.
 */
export function isPodUpdated(pod: Pod, hash: string, generation: string | undefined): boolean {
  const labels = pod.metadata?.labels;
  if (hash !== '' && labels?.[REVISION_HASH_LABEL] === hash) return true;
  return generation !== undefined && labels?.[TEMPLATE_GENERATION_LABEL] === generation;
}

/** Oldest first; on a tie, the further-along phase first (podByCreationTimestampAndPhase). */
export function byCreationThenPhase(a: Pod, b: Pod): number {
  const ta = a.metadata?.creationTimestamp ?? '';
  const tb = b.metadata?.creationTimestamp ?? '';
  if (ta !== tb) return ta < tb ? -1 : 1;
  const rank = (p: Pod) => ({ Running: 0, Pending: 1, Unknown: 2 })[p.status?.phase ?? ''] ?? 3;
  if (rank(a) !== rank(b)) return rank(a) - rank(b);
  return (a.metadata?.name ?? '') < (b.metadata?.name ?? '') ? -1 : 1;
}

/**
 * The node a daemon pod is for: spec.nodeName once bound, else the node its required affinity
 * names by metadata.name (util.GetTargetNodeName); undefined for neither.
 */
export function targetNodeName(pod: Pod): string | undefined {
  if (pod.spec?.nodeName) return pod.spec.nodeName;
  const terms =
    pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
  for (const term of terms) {
    for (const req of term.matchFields ?? []) {
      if (req.key === NODE_FIELD_METADATA_NAME && req.operator === 'In' && req.values?.length === 1) {
        return req.values[0];
      }
    }
  }
  return undefined;
}

export function minReadySeconds(ds: DaemonSet): number {
  return ds.spec?.minReadySeconds ?? 0;
}

export function dsKey(ds: DaemonSet): string {
  return `${ds.metadata!.namespace}/${ds.metadata!.name}`;
}

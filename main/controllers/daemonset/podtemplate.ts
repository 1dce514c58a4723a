/**
 * The pod a DaemonSet creates for a node (CreatePodTemplate + ReplaceDaemonSetPodNodeNameNodeAffinity):
 * the template with the template-generation and revision-hash labels, the daemon tolerations,
 * an ownerReference to the DaemonSet, and a required node affinity on metadata.name so the
 * scheduler binds it to that node and no other.
 */
import { NODE_FIELD_METADATA_NAME } from '../../../client/api/nodeaffinity.js';
import type { Affinity, DaemonSet, Pod } from '../../../client/api/types.js';
import { clone } from '../../../client/util/objects.js';
import { podFromTemplate } from '../common/podtemplate.js';
import { withDaemonTolerations } from './eligibility.js';
import { REVISION_HASH_LABEL, TEMPLATE_GENERATION_LABEL, templateGeneration } from './util.js';

/** Replaces any required node-selector terms with one naming the node (the controller already checked the rest). */
export function nodeNameAffinity(affinity: Affinity | undefined, nodeName: string): Affinity {
  const result = affinity ? clone(affinity) : {};
  const nodeAffinity = (result.nodeAffinity ??= {});
  nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution = {
    nodeSelectorTerms: [
      { matchFields: [{ key: NODE_FIELD_METADATA_NAME, operator: 'In', values: [nodeName] }] },
    ],
  };
  return result;
}

export function daemonPodFor(ds: DaemonSet, nodeName: string, hash: string): Pod {
  const pod = podFromTemplate(ds.spec?.template, ds, 'DaemonSet');
  const spec = pod.spec!;
  spec.tolerations = withDaemonTolerations(spec.tolerations, spec.hostNetwork ?? false);
  spec.affinity = nodeNameAffinity(spec.affinity, nodeName);
  const labels = pod.metadata!.labels!;
  // Both labels say which template the pod came from; either one makes it current
  // (isPodUpdated). Without a readable generation the hash alone does, as in Kubernetes.
  const generation = templateGeneration(ds);
  if (generation !== undefined) labels[TEMPLATE_GENERATION_LABEL] = generation;
  if (hash) labels[REVISION_HASH_LABEL] = hash;
  return pod;
}

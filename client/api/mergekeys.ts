/**
 * Kubernetes' patch strategies (the `patchStrategy: merge` and `patchMergeKey` of its types) for
 * the kinds kubelab serves: which lists a strategic merge patch merges item by item, and on what
 * key. The apiserver applies patches by this table (main/apiserver/strategicmerge.ts) and
 * clients build them by it (strategicdiff.ts); every list not named here is replaced whole.
 */

/** A list's merge key, or "" for a list of scalars merged as a set. */
export type MergeRule = string;

const POD_SPEC: Record<string, MergeRule> = {
  containers: 'name',
  initContainers: 'name',
  ephemeralContainers: 'name',
  volumes: 'name',
  imagePullSecrets: 'name',
  hostAliases: 'ip',
  'containers[].ports': 'containerPort',
  'containers[].env': 'name',
  'containers[].volumeMounts': 'mountPath',
  'containers[].volumeDevices': 'devicePath',
  'initContainers[].ports': 'containerPort',
  'initContainers[].env': 'name',
  'initContainers[].volumeMounts': 'mountPath',
  'initContainers[].volumeDevices': 'devicePath',
};

function under(prefix: string, rules: Record<string, MergeRule>): Record<string, MergeRule> {
  return Object.fromEntries(Object.entries(rules).map(([path, key]) => [`${prefix}.${path}`, key]));
}

const METADATA: Record<string, MergeRule> = {
  'metadata.ownerReferences': 'uid',
  'metadata.finalizers': '',
};

/** Kinds that carry a pod template at spec.template. */
const TEMPLATED: Record<string, MergeRule> = {
  ...METADATA,
  ...under('spec.template.spec', POD_SPEC),
  'spec.template.metadata.ownerReferences': 'uid',
  'spec.template.metadata.finalizers': '',
  'status.conditions': 'type',
};

/** Kubernetes' patch strategies of the kinds kubelab serves, by path ([] marks list items). */
const MERGE_KEYS: Record<string, Record<string, MergeRule>> = {
  Pod: { ...METADATA, ...under('spec', POD_SPEC), 'status.conditions': 'type' },
  DaemonSet: TEMPLATED,
  ReplicaSet: TEMPLATED,
  Deployment: TEMPLATED,
  Job: TEMPLATED,
  CronJob: { ...METADATA, ...under('spec.jobTemplate.spec.template.spec', POD_SPEC) },
  Node: {
    ...METADATA,
    'spec.podCIDRs': '',
    'status.conditions': 'type',
    'status.addresses': 'type',
  },
  Namespace: { ...METADATA, 'status.conditions': 'type' },
};

/** Which lists of a kind merge, and on what (metadata's lists for every kind). */
export function mergeRules(kind: string): Record<string, MergeRule> {
  return MERGE_KEYS[kind] ?? METADATA;
}

/**
 * What the API knows of each kind: its group/version, how it is named on the command line,
 * whether it lives in a namespace, and which `ApiObject` field carries it on the wire.
 */
import type { ApiObject } from '../../proto/gen/kubelab/v1/api.js';
import type { ApiObjectField, KindName, KubeObject } from './types.js';

export interface KindInfo {
  kind: KindName;
  apiVersion: string;
  group: string;
  version: string;
  plural: string;
  /**
   * The resource in Kubernetes REST paths and discovery: the plural, unless the group names it
   * otherwise (metrics.k8s.io serves NodeMetrics as `nodes`).
   */
  resource: string;
  singular: string;
  shortNames: string[];
  namespaced: boolean;
  /** Has a status subresource (status is written only through UpdateStatus or patch of status). */
  hasStatus: boolean;
  /** The field of `ApiObject` that carries this kind. */
  field: ApiObjectField;
  /** The protobuf message, e.g. "kubelab.v1.Pod". */
  messageType: string;
  /** Served for reading only (the apiserver writes it); why, for the authorizer's answer. */
  readOnly?: string;
}

function kind(
  k: KindName,
  apiVersion: string,
  plural: string,
  opts: {
    shortNames?: string[];
    namespaced: boolean;
    hasStatus: boolean;
    resource?: string;
    readOnly?: string;
  },
): KindInfo {
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
  return {
    kind: k,
    apiVersion,
    group,
    version,
    plural,
    resource: opts.resource ?? plural,
    singular: k.toLowerCase(),
    shortNames: opts.shortNames ?? [],
    namespaced: opts.namespaced,
    hasStatus: opts.hasStatus,
    field: (k[0].toLowerCase() + k.slice(1)) as ApiObjectField,
    messageType: `kubelab.v1.${k}`,
    ...(opts.readOnly ? { readOnly: opts.readOnly } : {}),
  };
}

export const KINDS: readonly KindInfo[] = [
  kind('Namespace', 'v1', 'namespaces', { shortNames: ['ns'], namespaced: false, hasStatus: true }),
  kind('Node', 'v1', 'nodes', { shortNames: ['no'], namespaced: false, hasStatus: true }),
  kind('Pod', 'v1', 'pods', { shortNames: ['po'], namespaced: true, hasStatus: true }),
  kind('Event', 'v1', 'events', { shortNames: ['ev'], namespaced: true, hasStatus: false }),
  kind('Lease', 'coordination.k8s.io/v1', 'leases', { namespaced: true, hasStatus: false }),
  kind('DaemonSet', 'apps/v1', 'daemonsets', { shortNames: ['ds'], namespaced: true, hasStatus: true }),
  kind('ReplicaSet', 'apps/v1', 'replicasets', { shortNames: ['rs'], namespaced: true, hasStatus: true }),
  kind('Deployment', 'apps/v1', 'deployments', { shortNames: ['deploy'], namespaced: true, hasStatus: true }),
  kind('Job', 'batch/v1', 'jobs', { namespaced: true, hasStatus: true }),
  kind('CronJob', 'batch/v1', 'cronjobs', { shortNames: ['cj'], namespaced: true, hasStatus: true }),
  kind('ControllerRevision', 'apps/v1', 'controllerrevisions', { namespaced: true, hasStatus: false }),
  kind('NodeMetrics', 'metrics.k8s.io/v1beta1', 'nodemetrics', {
    namespaced: false,
    hasStatus: false,
    resource: 'nodes',
  }),
  kind('ConfigMap', 'v1', 'configmaps', { shortNames: ['cm'], namespaced: true, hasStatus: false }),
  kind('Secret', 'v1', 'secrets', { namespaced: true, hasStatus: false }),
  kind('Service', 'v1', 'services', {
    shortNames: ['svc'],
    namespaced: true,
    hasStatus: true,
    readOnly:
      'kubelab has no service proxy yet, so Services are read-only: the apiserver keeps default/kubernetes, the address of the API',
  }),
];

const byName = new Map<string, KindInfo>();
for (const k of KINDS) {
  for (const n of [k.kind, k.plural, k.singular, ...k.shortNames]) byName.set(n.toLowerCase(), k);
  if (k.group) byName.set(`${k.plural}.${k.group}`.toLowerCase(), k);
}
const byField = new Map<string, KindInfo>(KINDS.map((k) => [k.field, k]));

/** No kind's name is longer: a longer one is refused without being copied. */
const MAX_KIND_NAME = 100;

/** Resolves "Pod", "pods", "pod", "po" or "daemonsets.apps" (any case). */
export function resolveKind(name: string): KindInfo | undefined {
  if (name.length > MAX_KIND_NAME) return undefined;
  return byName.get(name.trim().toLowerCase());
}

export function kindInfo(kind: KindName): KindInfo {
  const info = byName.get(kind.toLowerCase());
  if (!info) throw new Error(`unknown kind ${kind}`);
  return info;
}

/** Known kinds, for error messages: "Namespace, Node, Pod, ...". */
export function knownKinds(): string {
  return KINDS.map((k) => k.kind).join(', ');
}

/** Wraps an object for the wire. */
export function toApiObject(info: KindInfo, obj: KubeObject): ApiObject {
  return { [info.field]: obj } as ApiObject;
}

/** Unwraps an object from the wire: which kind it is and the object itself. */
export function fromApiObject(o: ApiObject | undefined): { info: KindInfo; object: KubeObject } | undefined {
  if (!o) return undefined;
  for (const key in o) {
    if (key === '_unknownFields') continue;
    const value = (o as Record<string, unknown>)[key];
    const info = byField.get(key);
    if (info && value !== undefined) return { info, object: value as KubeObject };
  }
  return undefined;
}

/** Object keys and the standard indexes, as client-go's cache package names them. */
import type { ObjectLike } from '../api/types.js';

/** "namespace/name", or "name" for cluster-scoped objects. */
export function metaNamespaceKey(obj: ObjectLike): string {
  const m = obj.metadata;
  if (!m?.name) throw new Error('object has no metadata.name');
  return m.namespace ? `${m.namespace}/${m.name}` : m.name;
}

export function splitKey(key: string): { namespace?: string; name: string } {
  const i = key.indexOf('/');
  return i < 0 ? { name: key } : { namespace: key.slice(0, i), name: key.slice(i + 1) };
}

export type IndexFunc<T> = (obj: T) => string[];

export const NAMESPACE_INDEX = 'namespace';
export const NODE_NAME_INDEX = 'spec.nodeName';
export const OWNER_UID_INDEX = 'owner-uid';
export const UID_INDEX = 'uid';
/**
 * Objects by the uid of their controller (the owner reference with controller: true); those
 * with none under orphanIndexKey(namespace). Kubernetes' controllerUIDIndex with its orphan key:
 * a controller reads what it may claim from two index lookups, not from every object of the
 * namespace.
 */
export const CONTROLLER_UID_INDEX = 'controller-uid';

export const namespaceIndexFunc: IndexFunc<ObjectLike> = (o) =>
  o.metadata?.namespace ? [o.metadata.namespace] : [];
export const nodeNameIndexFunc: IndexFunc<ObjectLike & { spec?: { nodeName?: string } }> = (o) =>
  o.spec?.nodeName ? [o.spec.nodeName] : [];
export const ownerUidIndexFunc: IndexFunc<ObjectLike> = (o) =>
  (o.metadata?.ownerReferences ?? []).map((r) => r.uid ?? '').filter(Boolean);
export const uidIndexFunc: IndexFunc<ObjectLike> = (o) => (o.metadata?.uid ? [o.metadata.uid] : []);

/** The CONTROLLER_UID_INDEX value of the objects of `namespace` that have no controller. */
export const orphanIndexKey = (namespace: string): string => `orphan/${namespace}`;
export const controllerUidIndexFunc: IndexFunc<ObjectLike> = (o) => [
  o.metadata?.ownerReferences?.find((r) => r.controller)?.uid ?? orphanIndexKey(o.metadata?.namespace ?? ''),
];

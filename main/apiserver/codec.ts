/**
 * How objects live in the store: JSON without metadata.resourceVersion (the store's revision
 * is the resourceVersion, and etcd only knows it after the write), under
 * /registry/<plural>/<namespace>/<name> or /registry/<plural>/<name>.
 */
import { kindInfo, type KindInfo } from '../../client/api/kinds.js';
import { NODE_LEASE_NAMESPACE } from '../../client/api/wellknown.js';
import type { KubeObject } from '../../client/api/types.js';
import { freezeSharingStrings } from './sharedstrings.js';
import { freezeSharingWith } from './sharedversions.js';

export const REGISTRY_PREFIX = '/registry/';

export function objectKey(info: KindInfo, namespace: string | undefined, name: string): string {
  return info.namespaced
    ? `${REGISTRY_PREFIX}${info.plural}/${namespace}/${name}`
    : `${REGISTRY_PREFIX}${info.plural}/${name}`;
}

/** The prefix under which a kind's objects (in one namespace, or all) live. */
export function kindPrefix(info: KindInfo, namespace?: string): string {
  return info.namespaced && namespace
    ? `${REGISTRY_PREFIX}${info.plural}/${namespace}/`
    : `${REGISTRY_PREFIX}${info.plural}/`;
}

/** Where the nodes' heartbeats live: their Nodes, and their Leases in kube-node-lease. */
const HEARTBEAT_PREFIXES = [
  kindPrefix(kindInfo('Node')),
  kindPrefix(kindInfo('Lease'), NODE_LEASE_NAMESPACE),
];

/** Whether a key holds a node's heartbeat (the store commits those first). */
export function isHeartbeatKey(key: string): boolean {
  return HEARTBEAT_PREFIXES.some((prefix) => key.startsWith(prefix));
}

/** The plural of the kind a key belongs to, or undefined for keys outside the registry. */
export function kindOfKey(key: string): string | undefined {
  if (!key.startsWith(REGISTRY_PREFIX)) return undefined;
  const end = key.indexOf('/', REGISTRY_PREFIX.length);
  return end < 0 ? undefined : key.slice(REGISTRY_PREFIX.length, end);
}

export function encodeForStore(obj: KubeObject): string {
  const meta = obj.metadata;
  if (meta?.resourceVersion === undefined) return JSON.stringify(obj);
  const { resourceVersion: _rv, ...rest } = meta;
  return JSON.stringify({ ...obj, metadata: rest });
}

/**
 * Parses a stored object, stamps its resourceVersion and freezes it (caches share it), its
 * short strings shared with the other cached objects and, given the version it replaces, every
 * part that did not change shared with that version.
 */
export function decodeStored(value: string, revision: number, previous?: KubeObject): KubeObject {
  const obj = JSON.parse(value) as KubeObject;
  // Stamped in place, not as `{ ...metadata, resourceVersion }`: in Node 20's V8 a spread that
  // adds a key gives every result a hidden class of its own, which the cache then kept (one
  // per cached version) and every mark-compact had to clear.
  (obj.metadata ??= {}).resourceVersion = String(revision);
  return previous ? freezeSharingWith(obj, previous) : freezeSharingStrings(obj);
}

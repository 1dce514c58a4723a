/**
 * What a viewer sees of a Secret: its name, labels, type and keys, never its values (the
 * values come back empty, with an annotation saying why; kubectl's last-applied-configuration,
 * which holds them too, is left out). Applied to every read — get, list, watch — before
 * anything is encoded for the viewer.
 */
import type { Identity } from '../../client/api/local.js';
import type { KindInfo } from '../../client/api/kinds.js';
import type { KubeObject, Secret } from '../../client/api/types.js';
import type { CachedObject } from './watchcache.js';

export const REDACTED_ANNOTATION = 'kubelab.io/redacted';
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';
const WHY = 'Secret values are hidden from the viewer role; use an admin token to read them';

export function needsRedaction(id: Identity, info: KindInfo): boolean {
  return id.role === 'viewer' && info.kind === 'Secret';
}

export function redactSecret(obj: KubeObject): KubeObject {
  const secret = obj as Secret;
  const { data, stringData: _never, ...rest } = secret;
  // kubectl apply keeps the whole manifest, values included, in this annotation.
  const { [LAST_APPLIED]: _applied, ...annotations } = secret.metadata?.annotations ?? {};
  return {
    ...rest,
    metadata: { ...secret.metadata, annotations: { ...annotations, [REDACTED_ANNOTATION]: WHY } },
    ...(data ? { data: Object.fromEntries(Object.keys(data).map((k) => [k, ''])) } : {}),
  } as KubeObject;
}

/** A cache entry for a viewer: a copy without values, and without the shared wire encodings. */
export function redactEntry(entry: CachedObject): CachedObject {
  return { key: entry.key, rv: entry.rv, object: redactSecret(entry.object) };
}

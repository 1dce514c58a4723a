/**
 * Which pods and revisions belong to a DaemonSet (ControllerRefManager): those it controls
 * and its selector still matches; orphans the selector matches are adopted; controlled ones
 * it no longer matches are released. Nothing is adopted by, or released from, a DaemonSet
 * being deleted.
 */
import type { LabelSelector } from '../../../client/api/selectors.js';
import type { DaemonSet, ObjectLike, OwnerReference } from '../../../client/api/types.js';

export interface Claim<T> {
  owned: T[];
  adopt: T[];
  release: T[];
}

export function controllerRef(obj: ObjectLike): OwnerReference | undefined {
  return obj.metadata?.ownerReferences?.find((r) => r.controller);
}

export function ownerRefFor(ds: DaemonSet): OwnerReference {
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    name: ds.metadata!.name,
    uid: ds.metadata!.uid,
    controller: true,
    blockOwnerDeletion: true,
  };
}

export function claim<T extends ObjectLike>(ds: DaemonSet, selector: LabelSelector, objects: T[]): Claim<T> {
  const result: Claim<T> = { owned: [], adopt: [], release: [] };
  const deleting = !!ds.metadata?.deletionTimestamp;
  for (const obj of objects) {
    const ref = controllerRef(obj);
    const matches = selector.matches(obj.metadata?.labels ?? {});
    if (ref) {
      if (ref.uid !== ds.metadata?.uid) continue;
      if (matches || deleting) result.owned.push(obj);
      else result.release.push(obj);
    } else if (matches && !deleting && !obj.metadata?.deletionTimestamp) {
      result.adopt.push(obj);
    }
  }
  return result;
}

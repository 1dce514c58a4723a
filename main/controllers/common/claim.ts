/**
 * Which objects belong to a controller (ControllerRefManager): those it controls and its
 * selector still matches; orphans the selector matches are adopted; controlled ones it no
 * longer matches are released. Nothing is adopted by, or released from, an owner being
 * deleted. Shared by every controller of pods (DaemonSet, ReplicaSet, Deployment, Job).
 */
import { kindInfo } from '../../../client/api/kinds.js';
import type { LabelSelector } from '../../../client/api/selectors.js';
import type { KindName, ObjectLike, OwnerReference } from '../../../client/api/types.js';

export interface Claim<T> {
  owned: T[];
  adopt: T[];
  release: T[];
}

export function controllerRef(obj: ObjectLike): OwnerReference | undefined {
  return obj.metadata?.ownerReferences?.find((r) => r.controller);
}

/** The controller reference an owner puts on what it makes or adopts. */
export function ownerRefFor(owner: ObjectLike, kind: KindName): OwnerReference {
  return {
    apiVersion: kindInfo(kind).apiVersion,
    kind,
    name: owner.metadata!.name,
    uid: owner.metadata!.uid,
    controller: true,
    blockOwnerDeletion: true,
  };
}

export function claim<T extends ObjectLike>(
  owner: ObjectLike,
  selector: LabelSelector,
  objects: T[],
): Claim<T> {
  const result: Claim<T> = { owned: [], adopt: [], release: [] };
  const deleting = !!owner.metadata?.deletionTimestamp;
  for (const obj of objects) {
    const ref = controllerRef(obj);
    // Another owner's: not ours to match, adopt or release.
    if (ref && ref.uid !== owner.metadata?.uid) continue;
    const matches = selector.matches(obj.metadata?.labels ?? {});
    if (ref) {
      if (matches || deleting) result.owned.push(obj);
      else result.release.push(obj);
    } else if (matches && !deleting && !obj.metadata?.deletionTimestamp) {
      result.adopt.push(obj);
    }
  }
  return result;
}

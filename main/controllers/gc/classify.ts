/**
 * The garbage collector's decisions, kept pure: given what is known of an object's owners and
 * dependents, what to do with it (Kubernetes' attemptToDeleteItem and
 * processDeletingDependentsItem).
 */
import type { ObjectLike, OwnerReference } from '../../../client/api/types.js';

/** solid: the owner exists and is not being deleted with its dependents first.
 *  dangling: the owner is gone (or was replaced by another object with the same name).
 *  waiting: the owner is being deleted in the foreground, waiting for its dependents. */
export type OwnerState = 'solid' | 'dangling' | 'waiting';

export type Decision =
  | { action: 'none' }
  | { action: 'removeOwnerReferences'; uids: string[] }
  | { action: 'unblockOwnerReferences'; uids: string[] }
  | { action: 'delete'; propagationPolicy: 'Background' | 'Foreground' | 'Orphan' };

export const FOREGROUND_FINALIZER = 'foregroundDeletion';
export const ORPHAN_FINALIZER = 'orphan';

export function isDeletingDependents(obj: ObjectLike): boolean {
  return !!obj.metadata?.deletionTimestamp && (obj.metadata.finalizers ?? []).includes(FOREGROUND_FINALIZER);
}

export function isOrphaning(obj: ObjectLike): boolean {
  return !!obj.metadata?.deletionTimestamp && (obj.metadata.finalizers ?? []).includes(ORPHAN_FINALIZER);
}

/**
 * What to do with an object that has owner references, given each owner's state and whether
 * the object itself has dependents (some of which are being deleted in the foreground).
 */
export function decideForDependent(
  obj: ObjectLike,
  owners: Map<string, OwnerState>,
  dependents: { any: boolean; anyDeletingDependents: boolean },
): Decision {
  const refs: OwnerReference[] = obj.metadata?.ownerReferences ?? [];
  const uidsIn = (state: OwnerState) =>
    refs.map((r) => r.uid ?? '').filter((uid) => owners.get(uid) === state);
  const solid = uidsIn('solid');
  const dangling = uidsIn('dangling');
  const waiting = uidsIn('waiting');

  if (solid.length > 0) {
    // Still owned: only drop the references that no longer hold it.
    const drop = [...dangling, ...waiting];
    return drop.length ? { action: 'removeOwnerReferences', uids: drop } : { action: 'none' };
  }
  if (waiting.length > 0 && dependents.any) {
    // Its owner waits for it, and it has dependents of its own: delete it in the foreground
    // too. If one of those dependents waits for it in turn, stop blocking our owner to avoid
    // a deadlock.
    const blocked = refs
      .filter((r) => r.blockOwnerDeletion && waiting.includes(r.uid ?? ''))
      .map((r) => r.uid!);
    if (dependents.anyDeletingDependents && blocked.length)
      return { action: 'unblockOwnerReferences', uids: blocked };
    return { action: 'delete', propagationPolicy: 'Foreground' };
  }
  if (dangling.length === 0 && waiting.length === 0) return { action: 'none' };
  const finalizers = obj.metadata?.finalizers ?? [];
  if (finalizers.includes(ORPHAN_FINALIZER)) return { action: 'delete', propagationPolicy: 'Orphan' };
  if (finalizers.includes(FOREGROUND_FINALIZER)) return { action: 'delete', propagationPolicy: 'Foreground' };
  return { action: 'delete', propagationPolicy: 'Background' };
}

/** A foreground deletion may finish once no dependent blocks it. */
export function blockingDependents<T extends ObjectLike>(ownerUid: string, dependents: T[]): T[] {
  return dependents.filter((d) =>
    (d.metadata?.ownerReferences ?? []).some((r) => r.uid === ownerUid && r.blockOwnerDeletion),
  );
}

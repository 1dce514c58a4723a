/**
 * The garbage collector's decisions, kept pure: given what is known of an object's owners and
 * dependents, what to do with it (Kubernetes' attemptToDeleteItem and
 * processDeletingDependentsItem), where an ownerReference points, and which owners an update
 * of a dependent may set free (the graph builder's addUnblockedOwnersToDeleteQueue).
 */
import { resolveKind } from '../../../client/api/kinds.js';
import type { KindName, ObjectLike, OwnerReference } from '../../../client/api/types.js';

/** solid: the owner exists and is not being deleted with its dependents first.
 *  dangling: the owner is gone (or was replaced by another object with the same name).
 *  waiting: the owner is being deleted in the foreground, waiting for its dependents.
 *  invalid: the reference cannot name any owner (a cluster-scoped object referring to a
 *  namespaced kind); no lookup will ever settle it. */
export type OwnerState = 'solid' | 'dangling' | 'waiting' | 'invalid';

export type Decision =
  | { action: 'none' }
  | { action: 'removeOwnerReferences'; uids: string[] }
  | { action: 'unblockOwnerReferences'; uids: string[] }
  | { action: 'delete'; propagationPolicy: 'Background' | 'Foreground' | 'Orphan' };

export const FOREGROUND_FINALIZER = 'foregroundDeletion';
export const ORPHAN_FINALIZER = 'orphan';

/** The event recorded on a dependent whose reference names an owner outside its namespace. */
export const INVALID_NAMESPACE_REASON = 'OwnerRefInvalidNamespace';

export function isDeletingDependents(obj: ObjectLike): boolean {
  return !!obj.metadata?.deletionTimestamp && (obj.metadata.finalizers ?? []).includes(FOREGROUND_FINALIZER);
}

export function isOrphaning(obj: ObjectLike): boolean {
  return !!obj.metadata?.deletionTimestamp && (obj.metadata.finalizers ?? []).includes(ORPHAN_FINALIZER);
}

/** Where an owner is to be found: an object of `kind` named `name`, in `namespace` (none for a
 *  cluster-scoped kind). */
export interface OwnerCoordinates {
  kind: KindName;
  name: string;
  namespace: string | undefined;
}

export type OwnerLocation =
  { scope: 'unknownKind' } | { scope: 'invalid' } | ({ scope: 'object' } & OwnerCoordinates);

/**
 * Where an ownerReference of `dependent` points. A reference carries no namespace: it names an
 * owner in the dependent's own namespace, or a cluster-scoped one. A uid alone does not make
 * an owner — an object with that uid elsewhere is not the one the reference names.
 */
export function locateOwner(ref: OwnerReference, dependent: ObjectLike): OwnerLocation {
  const info = resolveKind(ref.kind ?? '');
  if (!info) return { scope: 'unknownKind' };
  const namespace = dependent.metadata?.namespace || undefined;
  if (!info.namespaced)
    return { scope: 'object', kind: info.kind, name: ref.name ?? '', namespace: undefined };
  // A cluster-scoped object has no namespace to find a namespaced owner in.
  if (!namespace) return { scope: 'invalid' };
  return { scope: 'object', kind: info.kind, name: ref.name ?? '', namespace };
}

/** Whether `obj` is the object at these coordinates. */
export function isAt(obj: ObjectLike, at: OwnerCoordinates): boolean {
  return (
    obj.kind === at.kind &&
    obj.metadata?.name === at.name &&
    (obj.metadata?.namespace || undefined) === at.namespace
  );
}

/**
 * Whether `owner` (an object holding the uid `dependent` refers to) lives in another namespace
 * than the dependent, so the reference cannot name it. A cluster-scoped owner may be referred
 * to from anywhere.
 */
export function crossesNamespace(dependent: ObjectLike, owner: ObjectLike): boolean {
  const ownerNs = owner.metadata?.namespace || undefined;
  return ownerNs !== undefined && ownerNs !== (dependent.metadata?.namespace || undefined);
}

/** The message of the OwnerRefInvalidNamespace event (Kubernetes' wording for namespaced
 *  dependents; a cluster-scoped one is told why no namespace can hold its owner). */
export function invalidNamespaceMessage(ref: OwnerReference, dependent: ObjectLike): string {
  const ns = dependent.metadata?.namespace;
  if (!ns) {
    return (
      `ownerRef [${ref.apiVersion}/${ref.kind}, name: ${ref.name}, uid: ${ref.uid}] names a namespaced ` +
      `kind, which cannot own the cluster-scoped ${dependent.kind} ${dependent.metadata?.name}`
    );
  }
  return (
    `ownerRef [${ref.apiVersion}/${ref.kind}, namespace: ${ns}, name: ${ref.name}, uid: ${ref.uid}] ` +
    `does not exist in namespace "${ns}"`
  );
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
  // As Kubernetes: an object with a reference no owner can satisfy is left alone as a whole,
  // rather than judged on its other references, until someone fixes the reference.
  if (uidsIn('invalid').length > 0) return { action: 'none' };
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

/**
 * A foreground deletion may finish once no dependent blocks it. A dependent in another
 * namespace than a namespaced owner does not: its reference cannot name that owner (it is
 * garbage itself, or left alone if cluster-scoped), and waiting for it could last forever.
 */
export function blockingDependents<T extends ObjectLike>(owner: ObjectLike, dependents: T[]): T[] {
  const uid = owner.metadata?.uid;
  return dependents.filter(
    (d) =>
      !crossesNamespace(d, owner) &&
      (d.metadata?.ownerReferences ?? []).some((r) => r.uid === uid && r.blockOwnerDeletion === true),
  );
}

/**
 * The owners an update of a dependent stops blocking: a reference with `blockOwnerDeletion`
 * that was removed, or whose `blockOwnerDeletion` is no longer true. An owner waiting in the
 * foreground for this dependent must look again, or it waits forever (Kubernetes' graph
 * builder, addUnblockedOwnersToDeleteQueue).
 */
export function unblockedOwnerUids(old: ObjectLike, cur: ObjectLike): string[] {
  const now = new Map<string, OwnerReference>();
  for (const r of cur.metadata?.ownerReferences ?? []) if (r.uid) now.set(r.uid, r);
  const uids = new Set<string>();
  for (const r of old.metadata?.ownerReferences ?? []) {
    if (!r.uid || r.blockOwnerDeletion !== true) continue;
    if (now.get(r.uid)?.blockOwnerDeletion !== true) uids.add(r.uid);
  }
  return [...uids];
}

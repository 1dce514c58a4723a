/**
 * How a controller hears about the objects it owns (the add/update/delete handlers every
 * Kubernetes workload controller writes for its pods or ReplicaSets): an object's controller
 * reference names the owner to sync; an orphan wakes every owner whose selector matches it, so
 * one can adopt it; a change of owner or labels wakes the old owner too. Creations and
 * deletions are reported to the controller's expectations through the hooks.
 */
import { labelSelectorFromObject } from '../../../client/api/selectors.js';
import type { KindName, LabelSelector as LabelSelectorSpec, ObjectLike } from '../../../client/api/types.js';
import type { EventHandler } from '../../../client/cache/informer.js';
import { deepEqual } from '../../../client/util/objects.js';
import { controllerRef } from './claim.js';

export interface Owners<O extends ObjectLike> {
  kind: KindName;
  get(name: string, namespace: string | undefined): O | undefined;
  list(namespace: string | undefined): O[];
  selectorOf(owner: O): LabelSelectorSpec | undefined;
}

/** The owner an object's controller reference names, if it is in the cache as that incarnation. */
export function resolveControllerRef<O extends ObjectLike>(
  owners: Owners<O>,
  obj: ObjectLike,
): O | undefined {
  const ref = controllerRef(obj);
  if (!ref || ref.kind !== owners.kind) return undefined;
  const owner = owners.get(ref.name!, obj.metadata?.namespace);
  return owner?.metadata?.uid === ref.uid ? owner : undefined;
}

/** Owners whose (valid, non-empty) selector matches the object's labels. */
export function ownersSelecting<O extends ObjectLike>(owners: Owners<O>, obj: ObjectLike): O[] {
  return owners.list(obj.metadata?.namespace).filter((o) => {
    const sel = owners.selectorOf(o);
    if (!sel) return false;
    try {
      return labelSelectorFromObject(sel, 'spec.selector').matches(obj.metadata?.labels ?? {});
    } catch {
      return false;
    }
  });
}

export interface OwnedHooks<T, O> {
  enqueue(owner: O): void;
  /** An owned object appeared (CreationObserved). */
  created?(owner: O, obj: T): void;
  /** An owned object went, or began going (DeletionObserved). */
  deleted?(owner: O, obj: T): void;
  /** An owned object changed (beyond its owner). */
  updated?(owner: O, old: T, obj: T): void;
}

export function ownedObjectHandlers<T extends ObjectLike, O extends ObjectLike>(
  owners: Owners<O>,
  hooks: OwnedHooks<T, O>,
): EventHandler<T> {
  const deleted = (obj: T) => {
    const owner = resolveControllerRef(owners, obj);
    if (!owner) return;
    hooks.deleted?.(owner, obj);
    hooks.enqueue(owner);
  };
  return {
    onAdd(obj) {
      // Seen for the first time already being deleted (a restart): it will not come back.
      if (obj.metadata?.deletionTimestamp) return deleted(obj);
      const owner = resolveControllerRef(owners, obj);
      if (owner) {
        hooks.created?.(owner, obj);
        hooks.enqueue(owner);
        return;
      }
      if (!controllerRef(obj)) for (const o of ownersSelecting(owners, obj)) hooks.enqueue(o);
    },
    onUpdate(old, obj) {
      if (old.metadata?.resourceVersion === obj.metadata?.resourceVersion) return;
      // Being deleted counts as gone: the expectation of its deletion is met now.
      if (obj.metadata?.deletionTimestamp && !old.metadata?.deletionTimestamp) return deleted(obj);
      const oldRef = controllerRef(old);
      const curRef = controllerRef(obj);
      const refChanged = !deepEqual(oldRef, curRef);
      if (refChanged && oldRef) {
        const previous = resolveControllerRef(owners, old);
        if (previous) hooks.enqueue(previous);
      }
      if (curRef) {
        const owner = resolveControllerRef(owners, obj);
        if (!owner) return;
        hooks.updated?.(owner, old, obj);
        hooks.enqueue(owner);
        return;
      }
      if (refChanged || !deepEqual(old.metadata?.labels, obj.metadata?.labels))
        for (const o of ownersSelecting(owners, obj)) hooks.enqueue(o);
    },
    onDelete: deleted,
  };
}

/** The Owners view of an informer of owners whose selector is at spec.selector. */
export function ownersFromInformer<O extends ObjectLike & { spec?: { selector?: LabelSelectorSpec } }>(
  kind: KindName,
  informer: { get(name: string, namespace?: string): O | undefined; list(namespace?: string): O[] },
): Owners<O> {
  return {
    kind,
    get: (name, namespace) => informer.get(name, namespace),
    list: (namespace) => informer.list(namespace),
    selectorOf: (o) => o.spec?.selector,
  };
}

/**
 * What an owner may claim, read from the controller-uid index of a shared informer rather than
 * from every object of its namespace: the objects it controls and the namespace's orphans
 * (getPodsForDaemonSet and its kin, with Kubernetes' controllerUIDIndex). With thousands of
 * pods in one namespace, a sync then costs what the owner has, not what the namespace holds.
 */
import type { KindMap, KindName } from '../../../client/api/types.js';
import type { SharedIndexInformer } from '../../../client/cache/informer.js';
import { CONTROLLER_UID_INDEX, controllerUidIndexFunc, orphanIndexKey } from '../../../client/cache/keys.js';

/** Adds the controller-uid index (a no-op when another controller sharing the informer did). */
export function indexByController<K extends KindName>(informer: SharedIndexInformer<K>): void {
  informer.addIndexers({ [CONTROLLER_UID_INDEX]: controllerUidIndexFunc });
}

/** The objects whose controller is the owner with this uid. */
export function controlledBy<K extends KindName>(
  informer: SharedIndexInformer<K>,
  uid: string | undefined,
): KindMap[K][] {
  return uid ? informer.indexer.byIndex(CONTROLLER_UID_INDEX, uid) : [];
}

/** What `owner` may claim: the objects it controls, then the orphans of its namespace. */
export function controlledOrOrphans<K extends KindName>(
  informer: SharedIndexInformer<K>,
  owner: { metadata?: { uid?: string; namespace?: string } },
): KindMap[K][] {
  return [
    ...controlledBy(informer, owner.metadata?.uid),
    ...informer.indexer.byIndex(CONTROLLER_UID_INDEX, orphanIndexKey(owner.metadata?.namespace ?? '')),
  ];
}

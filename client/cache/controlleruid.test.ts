import { expect, it } from 'vitest';
import type { Pod } from '../api/types.js';
import { Indexer } from './indexer.js';
import { CONTROLLER_UID_INDEX, controllerUidIndexFunc, metaNamespaceKey, orphanIndexKey } from './keys.js';

const pod = (namespace: string, name: string, controller?: string, other?: string): Pod => ({
  metadata: {
    namespace,
    name,
    ownerReferences: [
      ...(other ? [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'x', uid: other }] : []),
      ...(controller
        ? [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: controller, controller: true }]
        : []),
    ],
  },
});

it('files objects under their controller’s uid, and those with none as orphans of their namespace', () => {
  const idx = new Indexer<Pod>({ [CONTROLLER_UID_INDEX]: controllerUidIndexFunc });
  const put = (p: Pod) => idx.set(metaNamespaceKey(p), p);
  put(pod('a', 'owned', 'rs-1'));
  put(pod('a', 'orphan', undefined, 'cm-1')); // an owner that is not its controller
  put(pod('b', 'orphan'));
  put(pod('a', 'other', 'rs-2'));
  const names = (value: string) => idx.byIndex(CONTROLLER_UID_INDEX, value).map((p) => p.metadata!.name);
  expect(names('rs-1')).toEqual(['owned']);
  expect(names(orphanIndexKey('a'))).toEqual(['orphan']);
  expect(names(orphanIndexKey('b'))).toEqual(['orphan']);

  // Adopted: it leaves the orphans.
  put(pod('a', 'orphan', 'rs-1'));
  expect(names('rs-1').sort()).toEqual(['orphan', 'owned']);
  expect(names(orphanIndexKey('a'))).toEqual([]);
});

/**
 * Adopting and releasing (ControllerRefManager's side effects): orphans an owner's selector
 * matches get its controller reference, controlled objects it no longer matches lose it. An
 * owner adopts only while it still exists as this incarnation (RecheckDeletionTimestamp), so a
 * controller acting on a stale cache never claims pods for an owner that was deleted and made
 * again.
 */
import { isNotFound } from '../../../client/api/errors.js';
import type { LabelSelector } from '../../../client/api/selectors.js';
import type { KindMap, KindName, ObjectLike } from '../../../client/api/types.js';
import type { Client } from '../../../client/client.js';
import type { Logger } from '../../logging.js';
import { claim, ownerRefFor } from './claim.js';

export interface Owner {
  kind: KindName;
  object: ObjectLike;
}

/** The objects `owner` owns once the orphans it selects are adopted and strays released. */
export async function claimObjects<K extends KindName>(
  client: Client,
  logger: Logger,
  owner: Owner,
  selector: LabelSelector,
  kind: K,
  objects: KindMap[K][],
): Promise<KindMap[K][]> {
  const { owned, adopt, release } = claim(owner.object, selector, objects);
  if (!adopt.length && !release.length) return owned;
  const meta = owner.object.metadata!;
  const fresh = adopt.length
    ? await client.get(owner.kind, meta.name!, { namespace: meta.namespace })
    : owner.object;
  const canAdopt = fresh.metadata?.uid === meta.uid && !fresh.metadata?.deletionTimestamp;
  for (const obj of canAdopt ? adopt : []) {
    try {
      const patched = await client.patch(
        kind,
        obj.metadata!.name!,
        {
          metadata: {
            resourceVersion: obj.metadata!.resourceVersion,
            ownerReferences: [
              ...(obj.metadata?.ownerReferences ?? []),
              ownerRefFor(owner.object, owner.kind),
            ],
          },
        },
        { namespace: obj.metadata!.namespace },
      );
      owned.push(patched as KindMap[K]);
    } catch (err) {
      if (!isNotFound(err))
        logger.info(
          {
            owner: `${owner.kind} ${meta.namespace}/${meta.name}`,
            object: obj.metadata?.name,
            err: (err as Error).message,
          },
          'could not adopt; will retry',
        );
    }
  }
  for (const obj of release) {
    try {
      await client.patch(
        kind,
        obj.metadata!.name!,
        {
          metadata: {
            resourceVersion: obj.metadata!.resourceVersion,
            ownerReferences: (obj.metadata?.ownerReferences ?? []).filter((r) => r.uid !== meta.uid),
          },
        },
        { namespace: obj.metadata!.namespace },
      );
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
  return owned;
}

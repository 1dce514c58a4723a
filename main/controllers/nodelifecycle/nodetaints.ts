/**
 * Changing a node's taints as the node controller does (SwapNodeControllerTaint): add and
 * remove in one update, starting from the cached node and re-reading it on a conflict.
 */
import { isConflict, isNotFound } from '../../../client/api/errors.js';
import { swapTaints } from '../../../client/api/taints.js';
import type { Node, Taint } from '../../../client/api/types.js';
import type { Client } from '../../../client/client.js';
import { rfc3339 } from '../../../client/util/clock.js';

const ATTEMPTS = 5;

/** Returns false if the node is gone; throws if the update keeps failing. */
export async function swapNodeTaints(
  client: Client,
  cached: Node,
  add: Taint[],
  remove: Taint[],
  now: number,
): Promise<boolean> {
  let node = cached;
  for (let attempt = 1; ; attempt++) {
    const taints = swapTaints(node.spec?.taints, add, remove, rfc3339(now));
    if (!taints) return true;
    try {
      await client.update<Node>({ ...node, spec: { ...node.spec, taints } });
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      if (!isConflict(err) || attempt >= ATTEMPTS) throw err;
    }
    try {
      node = await client.get('Node', cached.metadata!.name!);
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }
}

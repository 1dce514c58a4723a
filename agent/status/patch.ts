/**
 * The node status write as the kubelet sends it (nodeutil.PatchNodeStatus): a strategic merge
 * patch of the status subresource holding only what this round changed, without a
 * resourceVersion, so it never conflicts with the node lifecycle controller, a cordon or a
 * label written meanwhile, whatever copy of the Node it was computed from.
 */
import type { Node } from '../../client/api/types.js';
import { twoWayMergePatch } from '../../client/api/strategicdiff.js';
import { deepEqual } from '../../client/util/objects.js';

export function nodeStatusPatch(original: Node, modified: Node): Record<string, unknown> {
  // The spec is not the status writer's; metadata stays in, as with an update of the status.
  const diffed: Node = { ...modified, spec: original.spec };
  // status.addresses is marked to merge on `type`, but a node may have several of one type
  // (two InternalIPs): merged, a changed list would come out wrong, so the kubelet replaces it.
  const before = original.status?.addresses ?? [];
  const after = modified.status?.addresses ?? [];
  const replaceAddresses = before.length > 0 && !deepEqual(before, after);
  if (replaceAddresses) diffed.status = { ...modified.status, addresses: before };
  const patch = twoWayMergePatch('Node', original, diffed);
  if (replaceAddresses) {
    // The diff saw the old addresses on both sides, so it holds nothing of them.
    const status = (patch.status ?? {}) as Record<string, unknown>;
    status.addresses = [...after, { $patch: 'replace' }];
    patch.status = status;
  }
  return patch;
}

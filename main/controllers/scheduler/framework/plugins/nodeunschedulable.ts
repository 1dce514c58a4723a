/** NodeUnschedulable: keeps pods off cordoned nodes (spec.unschedulable) unless they tolerate it. */
import { TAINT_UNSCHEDULABLE, tolerates } from '../../../../../client/api/taints.js';
import type { Taint } from '../../../../../client/api/types.js';
import type { FilterPlugin } from '../types.js';

export const NODE_UNSCHEDULABLE = 'NodeUnschedulable';
export const REASON_NODE_UNSCHEDULABLE = 'node(s) were unschedulable';

/**
 * The taint a cordoned node carries once the node lifecycle controller catches up; a pod that
 * tolerates it may also ignore spec.unschedulable, so both say the same thing at once.
 */
const UNSCHEDULABLE_TAINT: Taint = { key: TAINT_UNSCHEDULABLE, effect: 'NoSchedule' };

export const nodeUnschedulable: FilterPlugin = {
  name: NODE_UNSCHEDULABLE,
  filter(pod, node) {
    if (!node.node.spec?.unschedulable) return undefined;
    const tolerated = (pod.pod.spec?.tolerations ?? []).some((t) => tolerates(t, UNSCHEDULABLE_TAINT));
    return tolerated ? undefined : [REASON_NODE_UNSCHEDULABLE];
  },
};

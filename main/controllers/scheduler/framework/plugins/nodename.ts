/** NodeName: a pod that names its node fits only there. */
import type { FilterPlugin } from '../types.js';

export const NODE_NAME = 'NodeName';
export const REASON_NODE_NAME = "node(s) didn't match the requested node name";

export const nodeName: FilterPlugin = {
  name: NODE_NAME,
  filter(pod, node) {
    const wanted = pod.pod.spec?.nodeName;
    return !wanted || wanted === node.name ? undefined : [REASON_NODE_NAME];
  },
};

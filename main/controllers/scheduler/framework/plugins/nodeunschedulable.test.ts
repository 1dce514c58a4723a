import { describe, expect, it } from 'vitest';
import type { Toleration } from '../../../../../client/api/types.js';
import { newNodeInfo, podInfo } from '../resources.js';
import { nodeUnschedulable, REASON_NODE_UNSCHEDULABLE } from './nodeunschedulable.js';

const KEY = 'node.kubernetes.io/unschedulable';

describe('NodeUnschedulable', () => {
  it.each<[string, boolean | undefined, Toleration[] | undefined, string[] | undefined]>([
    ['schedulable node', undefined, undefined, undefined],
    ['explicitly schedulable node', false, undefined, undefined],
    ['cordoned node, no tolerations', true, undefined, [REASON_NODE_UNSCHEDULABLE]],
    [
      'cordoned node, tolerated by key',
      true,
      [{ key: KEY, operator: 'Exists', effect: 'NoSchedule' }],
      undefined,
    ],
    ['cordoned node, tolerated by key with any effect', true, [{ key: KEY, operator: 'Exists' }], undefined],
    ['cordoned node, tolerate-everything toleration', true, [{ operator: 'Exists' }], undefined],
    ['cordoned node, Equal to the empty value', true, [{ key: KEY, value: '' }], undefined],
    ['cordoned node, Equal to another value', true, [{ key: KEY, value: 'x' }], [REASON_NODE_UNSCHEDULABLE]],
    [
      'cordoned node, wrong effect',
      true,
      [{ key: KEY, operator: 'Exists', effect: 'NoExecute' }],
      [REASON_NODE_UNSCHEDULABLE],
    ],
    ['cordoned node, other key', true, [{ key: 'other', operator: 'Exists' }], [REASON_NODE_UNSCHEDULABLE]],
  ])('%s', (_name, unschedulable, tolerations, expected) => {
    const node = newNodeInfo({ metadata: { name: 'n1' }, spec: { unschedulable } });
    const pod = podInfo({ metadata: { namespace: 'default', name: 'p' }, spec: { tolerations } });
    expect(nodeUnschedulable.filter(pod, node)).toEqual(expected);
  });

  it('uses Kubernetes wording', () => {
    expect(nodeUnschedulable.name).toBe('NodeUnschedulable');
    expect(REASON_NODE_UNSCHEDULABLE).toBe('node(s) were unschedulable');
  });
});

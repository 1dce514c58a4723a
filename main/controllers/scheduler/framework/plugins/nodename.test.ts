import { describe, expect, it } from 'vitest';
import { newNodeInfo, podInfo } from '../resources.js';
import { nodeName, REASON_NODE_NAME } from './nodename.js';

describe('NodeName', () => {
  it.each<[string, string | undefined, string[] | undefined]>([
    ['no node name', undefined, undefined],
    ['empty node name', '', undefined],
    ['this node', 'n1', undefined],
    ['another node', 'n2', [REASON_NODE_NAME]],
  ])('%s', (_name, wanted, expected) => {
    const node = newNodeInfo({ metadata: { name: 'n1' } });
    const pod = podInfo({ metadata: { namespace: 'default', name: 'p' }, spec: { nodeName: wanted } });
    expect(nodeName.filter(pod, node)).toEqual(expected);
  });

  it('uses Kubernetes wording', () => {
    expect(nodeName.name).toBe('NodeName');
    expect(REASON_NODE_NAME).toBe("node(s) didn't match the requested node name");
  });
});

import { describe, expect, it } from 'vitest';
import type { Node, NodeSelectorTerm, Pod, PodSpec } from '../../../../../client/api/types.js';
import { newNodeInfo, podInfo } from '../resources.js';
import { nodeAffinity, nodeNamesFromAffinity, REASON_NODE_AFFINITY } from './nodeaffinity.js';

const nodes: Node[] = [
  { metadata: { name: 'n1', labels: { zone: 'a', disk: 'ssd' } } },
  { metadata: { name: 'n2', labels: { zone: 'b', disk: 'ssd' } } },
  { metadata: { name: 'n3', labels: { zone: 'c' } } },
];
const zoneIn = (...values: string[]): NodeSelectorTerm => ({
  matchExpressions: [{ key: 'zone', operator: 'In', values }],
});
const ssd: NodeSelectorTerm = { matchExpressions: [{ key: 'disk', operator: 'In', values: ['ssd'] }] };
const pod = (spec: PodSpec) => podInfo({ metadata: { namespace: 'default', name: 'p' }, spec });

describe('NodeAffinity filter', () => {
  it.each<[string, PodSpec, Array<string[] | undefined>]>([
    ['no constraints', {}, [undefined, undefined, undefined]],
    ['nodeSelector', { nodeSelector: { disk: 'ssd' } }, [undefined, undefined, [REASON_NODE_AFFINITY]]],
    [
      'required affinity',
      {
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [zoneIn('b', 'c')] },
          },
        },
      },
      [[REASON_NODE_AFFINITY], undefined, undefined],
    ],
    [
      'nodeSelector and required affinity together',
      {
        nodeSelector: { disk: 'ssd' },
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [zoneIn('b', 'c')] },
          },
        },
      },
      [[REASON_NODE_AFFINITY], undefined, [REASON_NODE_AFFINITY]],
    ],
  ])('%s', (_name, spec, expected) => {
    const p = pod(spec);
    expect(nodes.map((n) => nodeAffinity.filter(p, newNodeInfo(n)))).toEqual(expected);
  });
});

describe('NodeAffinity score', () => {
  const preferring = (...terms: Array<[number, NodeSelectorTerm]>): PodSpec => ({
    affinity: {
      nodeAffinity: {
        preferredDuringSchedulingIgnoredDuringExecution: terms.map(([weight, preference]) => ({
          weight,
          preference,
        })),
      },
    },
  });
  it.each<[string, PodSpec, number[], number[]]>([
    ['no preferences: all zero stay zero', {}, [0, 0, 0], [0, 0, 0]],
    ['nothing matches: all zero stay zero', preferring([5, zoneIn('x')]), [0, 0, 0], [0, 0, 0]],
    ['one term', preferring([10, zoneIn('a')]), [10, 0, 0], [100, 0, 0]],
    [
      'weights add up, scaled by the best',
      preferring([10, zoneIn('a')], [30, ssd]),
      [40, 30, 0],
      [100, 75, 0],
    ],
    [
      'truncated like integer division',
      preferring([1, zoneIn('a', 'b')], [2, zoneIn('a')]),
      [3, 1, 0],
      [100, 33, 0],
    ],
  ])('%s', (_name, spec, raw, normalized) => {
    const p = pod(spec);
    const scores = nodes.map((n) => nodeAffinity.score(p, newNodeInfo(n)));
    expect(scores).toEqual(raw);
    nodeAffinity.normalize?.(scores);
    expect(scores).toEqual(normalized);
  });

  it('has Kubernetes name, wording and default weight', () => {
    expect(nodeAffinity.name).toBe('NodeAffinity');
    expect(nodeAffinity.weight).toBe(2);
    expect(REASON_NODE_AFFINITY).toBe("node(s) didn't match Pod's node affinity/selector");
  });
});

describe('nodeNamesFromAffinity (PreFilter)', () => {
  const withTerms = (terms: NodeSelectorTerm[]): Pod => ({
    spec: {
      affinity: {
        nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: terms } },
      },
    },
  });
  const byName = (...values: string[]): NodeSelectorTerm => ({
    matchFields: [{ key: 'metadata.name', operator: 'In', values }],
  });
  it.each<[string, Pod, string[] | undefined]>([
    ['no affinity', {}, undefined],
    ['one term naming a node (a DaemonSet pod)', withTerms([byName('n1')]), ['n1']],
    ['terms naming nodes: their union', withTerms([byName('n1'), byName('n2', 'n3')]), ['n1', 'n2', 'n3']],
    [
      'a term by labels: any node may match',
      withTerms([byName('n1'), { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] }]),
      undefined,
    ],
    [
      'two name requirements in one term: their intersection',
      withTerms([
        {
          matchFields: [
            { key: 'metadata.name', operator: 'In', values: ['n1', 'n2'] },
            { key: 'metadata.name', operator: 'In', values: ['n2', 'n3'] },
          ],
        },
      ]),
      ['n2'],
    ],
  ])('%s', (_what, pod, expected) => {
    const names = nodeNamesFromAffinity(pod);
    expect(names && [...names].sort()).toEqual(expected);
  });
});

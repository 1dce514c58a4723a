import { describe, expect, it } from 'vitest';
import {
  matchesNodeSelectorTerm,
  matchesNodeSelectorTerms,
  podMatchesNodeSelectorAndAffinity,
  preferredAffinityScore,
} from './nodeaffinity.js';
import type {
  Node,
  NodeSelectorRequirement,
  NodeSelectorTerm,
  Pod,
  PreferredSchedulingTerm,
} from './types.js';

const node: Node = {
  metadata: { name: 'node-1', labels: { zone: 'a', gen: '5', disk: 'ssd' } },
};
const unnamedNode: Node = { metadata: { labels: { zone: 'a' } } };

const expr = (key: string, operator: string, values?: string[]): NodeSelectorRequirement => ({
  key,
  operator,
  ...(values ? { values } : {}),
});
const field = (operator: string, values: string[], key = 'metadata.name'): NodeSelectorRequirement => ({
  key,
  operator,
  values,
});

describe('matchesNodeSelectorTerm: matchExpressions', () => {
  it.each<[string, NodeSelectorRequirement, boolean]>([
    ['In, value listed', expr('zone', 'In', ['a', 'b']), true],
    ['In, value not listed', expr('zone', 'In', ['b']), false],
    ['In, label missing', expr('region', 'In', ['a']), false],
    ['NotIn, value not listed', expr('zone', 'NotIn', ['b']), true],
    ['NotIn, value listed', expr('zone', 'NotIn', ['a']), false],
    ['NotIn, label missing', expr('region', 'NotIn', ['a']), true],
    ['Exists, label present', expr('zone', 'Exists'), true],
    ['Exists, label missing', expr('region', 'Exists'), false],
    ['DoesNotExist, label missing', expr('region', 'DoesNotExist'), true],
    ['DoesNotExist, label present', expr('zone', 'DoesNotExist'), false],
    ['Gt, greater', expr('gen', 'Gt', ['4']), true],
    ['Gt, equal', expr('gen', 'Gt', ['5']), false],
    ['invalid: a negative bound is no label value', expr('gen', 'Gt', ['-1']), false],
    ['Lt, smaller', expr('gen', 'Lt', ['6']), true],
    ['Lt, equal', expr('gen', 'Lt', ['5']), false],
    ['Gt, label missing', expr('region', 'Gt', ['1']), false],
    ['Gt, label not an integer', expr('disk', 'Gt', ['1']), false],
    ['invalid: Gt with a non-integer value', expr('gen', 'Gt', ['4.5']), false],
    ['invalid: Gt beyond int64', expr('gen', 'Lt', ['9223372036854775808']), false],
    ['invalid: Gt with two values', expr('gen', 'Gt', ['1', '2']), false],
    ['invalid: Lt without a value', expr('gen', 'Lt', []), false],
    ['invalid: In without values', expr('region', 'NotIn', []), false],
    ['invalid: Exists with values', expr('zone', 'Exists', ['a']), false],
    ['invalid: DoesNotExist with values', expr('region', 'DoesNotExist', ['a']), false],
    ['invalid: unknown operator', expr('zone', 'Equals', ['a']), false],
    ['invalid: missing operator', { key: 'region', values: ['a'] }, false],
    ['invalid: bad key', expr('bad key!', 'DoesNotExist'), false],
    ['invalid: bad value', expr('region', 'NotIn', ['not a label value']), false],
  ])('%s', (_name, requirement, expected) => {
    expect(matchesNodeSelectorTerm(node, { matchExpressions: [requirement] })).toBe(expected);
  });
});

describe('matchesNodeSelectorTerm: matchFields', () => {
  it.each<[string, Node, NodeSelectorRequirement, boolean]>([
    ['In, this node', node, field('In', ['node-1']), true],
    ['In, another node', node, field('In', ['node-2']), false],
    ['NotIn, another node', node, field('NotIn', ['node-2']), true],
    ['NotIn, this node', node, field('NotIn', ['node-1']), false],
    ['unknown field reads as empty: In', node, field('In', ['x'], 'spec.podCIDR'), false],
    ['unknown field reads as empty: NotIn', node, field('NotIn', ['x'], 'spec.podCIDR'), true],
    ['invalid: two values', node, field('In', ['node-1', 'node-2']), false],
    ['invalid: no values', node, field('NotIn', []), false],
    ['invalid: Exists is not a field operator', node, field('Exists', []), false],
    ['a node without a name skips matchFields', unnamedNode, field('In', ['node-1']), true],
    ['but not an invalid one', unnamedNode, field('In', ['node-1', 'node-2']), false],
  ])('%s', (_name, target, requirement, expected) => {
    expect(matchesNodeSelectorTerm(target, { matchFields: [requirement] })).toBe(expected);
  });
});

describe('matchesNodeSelectorTerms', () => {
  const zoneA: NodeSelectorTerm = { matchExpressions: [expr('zone', 'In', ['a'])] };
  const zoneB: NodeSelectorTerm = { matchExpressions: [expr('zone', 'In', ['b'])] };
  const invalid: NodeSelectorTerm = { matchExpressions: [expr('zone', 'Bogus', ['a'])] };
  it.each<[string, NodeSelectorTerm[] | undefined, boolean]>([
    ['no terms select nothing', [], false],
    ['missing terms select nothing', undefined, false],
    ['an empty term selects nothing', [{}], false],
    ['a term of empty lists selects nothing', [{ matchExpressions: [], matchFields: [] }], false],
    ['one matching term', [zoneA], true],
    ['one failing term', [zoneB], false],
    ['terms are ORed', [zoneB, zoneA], true],
    ['an invalid term does not stop the others', [invalid, zoneA], true],
    ['an invalid term alone selects nothing', [invalid], false],
    [
      'expressions are ANDed',
      [{ matchExpressions: [expr('zone', 'In', ['a']), expr('gen', 'Gt', ['9'])] }],
      false,
    ],
    [
      'an invalid requirement fails a term whose other requirements match',
      [{ matchExpressions: [expr('zone', 'In', ['a']), expr('gen', 'Gt', ['x'])] }],
      false,
    ],
    [
      'expressions and fields are ANDed: both match',
      [{ matchExpressions: [expr('zone', 'In', ['a'])], matchFields: [field('In', ['node-1'])] }],
      true,
    ],
    [
      'expressions and fields are ANDed: field fails',
      [{ matchExpressions: [expr('zone', 'In', ['a'])], matchFields: [field('In', ['node-2'])] }],
      false,
    ],
    [
      'expressions and fields are ANDed: expression fails',
      [{ matchExpressions: [expr('zone', 'In', ['b'])], matchFields: [field('In', ['node-1'])] }],
      false,
    ],
  ])('%s', (_name, terms, expected) => {
    expect(matchesNodeSelectorTerms(node, terms)).toBe(expected);
  });

  it('treats a node without labels as having none', () => {
    expect(matchesNodeSelectorTerms({}, [{ matchExpressions: [expr('zone', 'DoesNotExist')] }])).toBe(true);
    expect(matchesNodeSelectorTerms({}, [zoneA])).toBe(false);
  });
});

describe('podMatchesNodeSelectorAndAffinity', () => {
  const required = (...nodeSelectorTerms: NodeSelectorTerm[]): Pod['spec'] => ({
    affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms } } },
  });
  const zoneA: NodeSelectorTerm = { matchExpressions: [expr('zone', 'In', ['a'])] };
  const zoneB: NodeSelectorTerm = { matchExpressions: [expr('zone', 'In', ['b'])] };
  it.each<[string, Pod['spec'], boolean]>([
    ['no spec', undefined, true],
    ['no constraints', {}, true],
    ['empty nodeSelector', { nodeSelector: {} }, true],
    ['nodeSelector matches', { nodeSelector: { zone: 'a', disk: 'ssd' } }, true],
    ['nodeSelector value differs', { nodeSelector: { zone: 'a', disk: 'hdd' } }, false],
    ['nodeSelector label missing', { nodeSelector: { region: 'eu' } }, false],
    ['required affinity matches', required(zoneA), true],
    ['required affinity fails', required(zoneB), false],
    ['required affinity with no terms admits no node', required(), false],
    [
      'required affinity without a term list admits no node',
      { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: {} } } },
      false,
    ],
    ['nodeSelector and affinity both match', { nodeSelector: { zone: 'a' }, ...required(zoneA) }, true],
    ['nodeSelector fails, affinity matches', { nodeSelector: { zone: 'b' }, ...required(zoneA) }, false],
    ['nodeSelector matches, affinity fails', { nodeSelector: { zone: 'a' }, ...required(zoneB) }, false],
    [
      'preferred terms do not constrain',
      {
        affinity: {
          nodeAffinity: {
            preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 1, preference: zoneB }],
          },
        },
      },
      true,
    ],
  ])('%s', (_name, spec, expected) => {
    expect(podMatchesNodeSelectorAndAffinity({ spec }, node)).toBe(expected);
  });
});

describe('preferredAffinityScore', () => {
  const preferring = (...terms: PreferredSchedulingTerm[]): Pod => ({
    spec: { affinity: { nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: terms } } },
  });
  const zoneA: NodeSelectorTerm = { matchExpressions: [expr('zone', 'In', ['a'])] };
  const ssd: NodeSelectorTerm = { matchExpressions: [expr('disk', 'In', ['ssd'])] };
  const zoneB: NodeSelectorTerm = { matchExpressions: [expr('zone', 'In', ['b'])] };
  it.each<[string, Pod, number]>([
    ['no affinity', {}, 0],
    ['no preferred terms', preferring(), 0],
    ['one matching term', preferring({ weight: 10, preference: zoneA }), 10],
    [
      'matching weights add up',
      preferring({ weight: 10, preference: zoneA }, { weight: 5, preference: ssd }),
      15,
    ],
    [
      'non-matching terms count nothing',
      preferring({ weight: 10, preference: zoneA }, { weight: 7, preference: zoneB }),
      10,
    ],
    ['a zero weight counts nothing', preferring({ weight: 0, preference: zoneA }), 0],
    ['a missing weight counts nothing', preferring({ preference: zoneA }), 0],
    ['an empty preference matches nothing', preferring({ weight: 3, preference: {} }), 0],
    ['a missing preference matches nothing', preferring({ weight: 3 }), 0],
    [
      'an invalid preference matches nothing',
      preferring({ weight: 3, preference: { matchExpressions: [expr('zone', 'Exists', ['a'])] } }),
      0,
    ],
    [
      'matchFields count too',
      preferring({ weight: 4, preference: { matchFields: [field('In', ['node-1'])] } }),
      4,
    ],
  ])('%s', (_name, pod, expected) => {
    expect(preferredAffinityScore(pod, node)).toBe(expected);
  });
});

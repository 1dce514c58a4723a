import { describe, expect, it } from 'vitest';
import type { Taint, Toleration } from '../../../../../client/api/types.js';
import { newNodeInfo, podInfo } from '../resources.js';
import {
  countIntolerablePreferNoSchedule,
  taintToleration,
  untoleratedTaintReason,
} from './tainttoleration.js';

const gpu: Taint = { key: 'dedicated', value: 'gpu', effect: 'NoSchedule' };
const unreachable: Taint = { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' };
const spot: Taint = { key: 'spot', value: 'true', effect: 'PreferNoSchedule' };
const old: Taint = { key: 'old-kernel', effect: 'PreferNoSchedule' };

const node = (taints?: Taint[]) => newNodeInfo({ metadata: { name: 'n' }, spec: { taints } });
const pod = (tolerations?: Toleration[]) =>
  podInfo({ metadata: { namespace: 'default', name: 'p' }, spec: { tolerations } });

describe('TaintToleration filter', () => {
  it.each<[string, Taint[] | undefined, Toleration[] | undefined, string[] | undefined]>([
    ['no taints', undefined, undefined, undefined],
    ['PreferNoSchedule never filters', [spot], undefined, undefined],
    ['untolerated NoSchedule', [gpu], undefined, ['node(s) had untolerated taint {dedicated: gpu}']],
    [
      'untolerated NoExecute prints an empty value',
      [unreachable],
      [],
      ['node(s) had untolerated taint {node.kubernetes.io/unreachable: }'],
    ],
    ['tolerated NoSchedule', [gpu], [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }], undefined],
    ['tolerated by Exists on the key', [gpu, unreachable], [{ operator: 'Exists' }], undefined],
    [
      'a toleration for another effect does not help',
      [gpu],
      [{ key: 'dedicated', operator: 'Exists', effect: 'NoExecute' }],
      ['node(s) had untolerated taint {dedicated: gpu}'],
    ],
    [
      'the first untolerated taint, in node order, is reported',
      [spot, gpu, unreachable],
      [{ key: 'dedicated', operator: 'Exists' }],
      ['node(s) had untolerated taint {node.kubernetes.io/unreachable: }'],
    ],
    [
      'only one reason when several are untolerated',
      [unreachable, gpu],
      undefined,
      ['node(s) had untolerated taint {node.kubernetes.io/unreachable: }'],
    ],
  ])('%s', (_name, taints, tolerations, expected) => {
    expect(taintToleration.filter(pod(tolerations), node(taints))).toEqual(expected);
  });

  it('formats a taint without key or value', () => {
    expect(untoleratedTaintReason({ effect: 'NoSchedule' })).toBe('node(s) had untolerated taint {: }');
  });
});

describe('TaintToleration score', () => {
  it.each<[string, Taint[] | undefined, Toleration[] | undefined, number]>([
    ['no taints', undefined, undefined, 0],
    ['NoSchedule and NoExecute are not counted', [gpu, unreachable], undefined, 0],
    ['each untolerated PreferNoSchedule counts', [spot, old, gpu], undefined, 2],
    [
      'tolerated with effect PreferNoSchedule',
      [spot, old],
      [{ key: 'spot', operator: 'Exists', effect: 'PreferNoSchedule' }],
      1,
    ],
    ['tolerated with an empty effect', [spot, old], [{ operator: 'Exists' }], 0],
    [
      'a NoSchedule toleration does not count',
      [spot],
      [{ key: 'spot', operator: 'Exists', effect: 'NoSchedule' }],
      1,
    ],
    ['a value mismatch does not tolerate', [spot], [{ key: 'spot', value: 'false' }], 1],
  ])('%s', (_name, taints, tolerations, expected) => {
    expect(taintToleration.score(pod(tolerations), node(taints))).toBe(expected);
    expect(countIntolerablePreferNoSchedule(taints, tolerations)).toBe(expected);
  });

  it.each<[string, number[], number[]]>([
    ['none intolerable: everyone gets 100', [0, 0, 0], [100, 100, 100]],
    ['most intolerable gets 0', [0, 1, 2], [100, 50, 0]],
    ['truncated before reversing', [1, 3, 0], [67, 0, 100]],
  ])('normalizes reversed: %s', (_name, raw, expected) => {
    const scores = [...raw];
    taintToleration.normalize?.(scores);
    expect(scores).toEqual(expected);
  });

  it('scores whole nodes end to end', () => {
    const p = pod([{ key: 'spot', operator: 'Exists' }]);
    const scores = [node(), node([spot]), node([spot, old]), node([old, { ...old, key: 'x' }])].map((n) =>
      taintToleration.score(p, n),
    );
    expect(scores).toEqual([0, 0, 1, 2]);
    taintToleration.normalize?.(scores);
    expect(scores).toEqual([100, 100, 50, 0]);
  });

  it('has the Kubernetes name and default weight', () => {
    expect(taintToleration.name).toBe('TaintToleration');
    expect(taintToleration.weight).toBe(3);
  });
});

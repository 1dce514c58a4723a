import { describe, expect, it } from 'vitest';
import type { Container, Pod } from '../../../../../client/api/types.js';
import { newNodeInfo, podInfo } from '../resources.js';
import {
  leastRequestedScore,
  nodeResourcesFit,
  REASON_INSUFFICIENT_CPU,
  REASON_INSUFFICIENT_EPHEMERAL_STORAGE,
  REASON_INSUFFICIENT_MEMORY,
  REASON_TOO_MANY_PODS,
} from './noderesourcesfit.js';

let podCount = 0;
const pod = (requests?: Record<string, string>): Pod => {
  const container: Container = { name: 'c', ...(requests ? { resources: { requests } } : {}) };
  return { metadata: { namespace: 'default', name: `p${podCount++}` }, spec: { containers: [container] } };
};
const node = (allocatable: Record<string, string>, existing: Pod[] = []) =>
  newNodeInfo({ metadata: { name: 'n' }, status: { allocatable } }, existing.map(podInfo));

describe('NodeResourcesFit filter', () => {
  // 2 cpu, 4Gi, 10Gi of disk and 3 pod slots, of which one pod already takes 1500m and 1Gi.
  const roomy = { cpu: '2', memory: '4Gi', 'ephemeral-storage': '10Gi', pods: '3' };
  const busy = () => node(roomy, [pod({ cpu: '1500m', memory: '1Gi' })]);
  const full = () => node({ ...roomy, pods: '2' }, [pod({ cpu: '1' }), pod({ memory: '1Gi' })]);
  const overcommitted = () => node(roomy, [pod({ cpu: '3', memory: '5Gi', 'ephemeral-storage': '11Gi' })]);

  it.each<[string, () => ReturnType<typeof node>, Record<string, string> | undefined, string[] | undefined]>([
    ['fits', busy, { cpu: '500m', memory: '1Gi' }, undefined],
    ['cpu exactly fills the node', busy, { cpu: '500m' }, undefined],
    ['one millicore too many', busy, { cpu: '501m' }, [REASON_INSUFFICIENT_CPU]],
    ['memory exactly fills the node', busy, { memory: '3Gi' }, undefined],
    ['one byte too many', busy, { memory: String(3 * 1024 ** 3 + 1) }, [REASON_INSUFFICIENT_MEMORY]],
    ['ephemeral storage exactly fills the node', busy, { 'ephemeral-storage': '10Gi' }, undefined],
    [
      'ephemeral storage short',
      busy,
      { 'ephemeral-storage': '11Gi' },
      [REASON_INSUFFICIENT_EPHEMERAL_STORAGE],
    ],
    [
      'every shortfall is reported, in order',
      full,
      { cpu: '2', memory: '4Gi', 'ephemeral-storage': '20Gi' },
      [
        REASON_TOO_MANY_PODS,
        REASON_INSUFFICIENT_CPU,
        REASON_INSUFFICIENT_MEMORY,
        REASON_INSUFFICIENT_EPHEMERAL_STORAGE,
      ],
    ],
    ['no free pod slot', full, { cpu: '100m' }, [REASON_TOO_MANY_PODS]],
    ['no free pod slot, even for a pod without requests', full, undefined, [REASON_TOO_MANY_PODS]],
    ['a pod without requests fits an overcommitted node', overcommitted, undefined, undefined],
    ['explicit zero requests fit an overcommitted node', overcommitted, { cpu: '0', memory: '0' }, undefined],
    [
      'only the requested resources are checked',
      overcommitted,
      { memory: '1Mi' },
      [REASON_INSUFFICIENT_MEMORY],
    ],
    [
      'a node without allocatable pods takes none',
      () => node({ cpu: '2', memory: '4Gi' }),
      { cpu: '1' },
      [REASON_TOO_MANY_PODS],
    ],
    [
      'a node with nothing allocatable fits no request',
      () => node({ pods: '10' }),
      { cpu: '1m' },
      [REASON_INSUFFICIENT_CPU],
    ],
  ])('%s', (_name, makeNode, requests, expected) => {
    expect(nodeResourcesFit.filter(podInfo(pod(requests)), makeNode())).toEqual(expected);
  });
});

describe('leastRequestedScore', () => {
  it.each<[number, number, number]>([
    [0, 0, 0],
    [0, 4000, 100],
    [1000, 4000, 75],
    [1, 3, 66],
    [4000, 4000, 0],
    [5000, 4000, 0],
  ])('requested %d of %d → %d', (requested, capacity, expected) => {
    expect(leastRequestedScore(requested, capacity)).toBe(expected);
  });
});

describe('NodeResourcesFit score (LeastAllocated)', () => {
  it.each<[string, Record<string, string>, Pod[], Record<string, string> | undefined, number]>([
    ['empty node', { cpu: '4', memory: '8Gi' }, [], { cpu: '1', memory: '2Gi' }, 75],
    [
      'cpu 25, memory 50: the mean truncates',
      { cpu: '4', memory: '10000' },
      [],
      { cpu: '3', memory: '5000' },
      37,
    ],
    [
      'existing pods count',
      { cpu: '4', memory: '8Gi' },
      [pod({ cpu: '2', memory: '4Gi' })],
      { cpu: '1', memory: '2Gi' },
      25,
    ],
    [
      'more requested than allocatable scores 0 for that resource',
      { cpu: '4', memory: '10000' },
      [],
      { cpu: '5', memory: '5000' },
      25,
    ],
    [
      'nothing allocatable scores 0 for that resource',
      { memory: '10000' },
      [],
      { cpu: '1', memory: '5000' },
      25,
    ],
    // 100m of 1000m and 200Mi of 1Gi: (90 + 80) / 2
    ['a pod without requests counts with the defaults', { cpu: '1', memory: '1Gi' }, [], undefined, 85],
    // 200m of 1000m and 400Mi of 1Gi: (80 + 60) / 2
    ['pods on the node count with the defaults too', { cpu: '1', memory: '1Gi' }, [pod()], undefined, 70],
    // explicit zeros are not defaulted: (100 + 100) / 2
    [
      'explicit zero requests count as zero',
      { cpu: '1', memory: '1Gi' },
      [pod({ cpu: '0', memory: '0' })],
      { cpu: '0', memory: '0' },
      100,
    ],
  ])('%s', (_name, allocatable, existing, requests, expected) => {
    expect(nodeResourcesFit.score(podInfo(pod(requests)), node(allocatable, existing))).toBe(expected);
  });

  it('has the Kubernetes name and default weight, and needs no normalization', () => {
    expect(nodeResourcesFit.name).toBe('NodeResourcesFit');
    expect(nodeResourcesFit.weight).toBe(1);
    expect(nodeResourcesFit.normalize).toBeUndefined();
  });
});

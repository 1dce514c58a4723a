import { describe, expect, it } from 'vitest';
import type { Container, Pod } from '../../../../../client/api/types.js';
import { newNodeInfo, podInfo } from '../resources.js';
import { balancedResourceScore, nodeResourcesBalancedAllocation } from './balancedallocation.js';

let podCount = 0;
const pod = (requests?: Record<string, string>): Pod => {
  const container: Container = { name: 'c', ...(requests ? { resources: { requests } } : {}) };
  return { metadata: { namespace: 'default', name: `p${podCount++}` }, spec: { containers: [container] } };
};

describe('balancedResourceScore', () => {
  it.each<[string, number[], number[], number]>([
    ['equal shares', [2000, 4], [4000, 8], 100],
    ['a quarter and three quarters', [1000, 6], [4000, 8], 75],
    ['half and a quarter: 87.5 truncates', [2000, 2], [4000, 8], 87],
    ['a share above 1 counts as 1', [8000, 4], [4000, 8], 75],
    ['a resource the node lacks is left out', [1000, 4], [4000, 0], 100],
    ['nothing allocatable', [1, 1], [0, 0], 100],
    ['more than two resources: population standard deviation', [1, 2, 3], [4, 4, 4], 79],
  ])('%s', (_name, requested, allocatable, expected) => {
    expect(balancedResourceScore(requested, allocatable)).toBe(expected);
  });
});

describe('NodeResourcesBalancedAllocation', () => {
  it.each<[string, Record<string, string>, Pod[], Record<string, string> | undefined, number]>([
    [
      'the pod evens the node out',
      { cpu: '4', memory: '8Gi' },
      [pod({ cpu: '1', memory: '3Gi' })],
      { cpu: '1', memory: '1Gi' },
      100,
    ],
    ['the pod tips the balance', { cpu: '4', memory: '8Gi' }, [], { cpu: '3', memory: '2Gi' }, 75],
    // cpu 500m of 1000m, memory 0 of 1Gi: the bare pod's defaults do not count here.
    ['pods without requests weigh nothing', { cpu: '1', memory: '1Gi' }, [pod()], { cpu: '500m' }, 75],
    ['a pod that requests nothing scores 0 everywhere', { cpu: '4', memory: '8Gi' }, [], undefined, 0],
    [
      'explicit zero requests are best-effort too',
      { cpu: '4', memory: '8Gi' },
      [],
      { cpu: '0', memory: '0' },
      0,
    ],
    [
      'ephemeral storage alone is best-effort for this plugin',
      { cpu: '4', memory: '8Gi' },
      [],
      { 'ephemeral-storage': '1Gi' },
      0,
    ],
  ])('%s', (_name, allocatable, existing, requests, expected) => {
    const node = newNodeInfo({ metadata: { name: 'n' }, status: { allocatable } }, existing.map(podInfo));
    expect(nodeResourcesBalancedAllocation.score(podInfo(pod(requests)), node)).toBe(expected);
  });

  it('has the Kubernetes name and default weight, and needs no normalization', () => {
    expect(nodeResourcesBalancedAllocation.name).toBe('NodeResourcesBalancedAllocation');
    expect(nodeResourcesBalancedAllocation.weight).toBe(1);
    expect(nodeResourcesBalancedAllocation.normalize).toBeUndefined();
  });
});

import { describe, expect, it } from 'vitest';
import type { Container, Node, Pod } from '../../../../client/api/types.js';
import { DEFAULT_MEMORY_REQUEST, DEFAULT_MILLI_CPU_REQUEST } from '../../../../client/api/resources.js';
import { addPod, newNodeInfo, podInfo, removePod, setNode } from './resources.js';

const Mi = 1024 * 1024;
const Gi = 1024 * Mi;

const container = (requests?: Record<string, string>): Container => ({
  name: 'c',
  ...(requests ? { resources: { requests } } : {}),
});
const pod = (containers: Container[], initContainers?: Container[], name = 'p'): Pod => ({
  metadata: { namespace: 'default', name },
  spec: { containers, ...(initContainers ? { initContainers } : {}) },
});

describe('podInfo and NodeInfo bookkeeping', () => {
  const node: Node = {
    metadata: { name: 'n1' },
    status: { allocatable: { cpu: '4', memory: '8Gi', pods: '10' } },
  };
  const small = podInfo(pod([container({ cpu: '100m', memory: '100Mi' })], undefined, 'small'));
  const bare = podInfo(pod([container()], undefined, 'bare'));

  it('keys pods by namespace/name and precomputes their requests', () => {
    expect(small.key).toBe('default/small');
    expect(small.requests).toEqual({ milliCPU: 100, memory: 100 * Mi, ephemeralStorage: 0, pods: 1 });
    expect(bare.nonZeroRequests).toEqual({
      milliCPU: DEFAULT_MILLI_CPU_REQUEST,
      memory: DEFAULT_MEMORY_REQUEST,
      ephemeralStorage: 0,
      pods: 1,
    });
  });

  it('starts empty, or with the pods given', () => {
    const empty = newNodeInfo(node);
    expect(empty.name).toBe('n1');
    expect(empty.allocatable).toEqual({ milliCPU: 4000, memory: 8 * Gi, ephemeralStorage: 0, pods: 10 });
    expect(empty.requested).toEqual({ milliCPU: 0, memory: 0, ephemeralStorage: 0, pods: 0 });
    expect(empty.pods.size).toBe(0);

    const busy = newNodeInfo(node, [small, bare]);
    expect([...busy.pods.keys()]).toEqual(['default/small', 'default/bare']);
    expect(busy.requested).toEqual({ milliCPU: 100, memory: 100 * Mi, ephemeralStorage: 0, pods: 2 });
    expect(busy.nonZeroRequested).toEqual({
      milliCPU: 100 + DEFAULT_MILLI_CPU_REQUEST,
      memory: 100 * Mi + DEFAULT_MEMORY_REQUEST,
      ephemeralStorage: 0,
      pods: 2,
    });
  });

  it('adds, replaces and removes pods, keeping the sums', () => {
    const info = newNodeInfo(node, [small]);
    addPod(info, bare);
    const bigger = podInfo(pod([container({ cpu: '1', memory: '1Gi' })], undefined, 'small'));
    addPod(info, bigger);
    expect(info.pods.size).toBe(2);
    expect(info.requested).toEqual({ milliCPU: 1000, memory: Gi, ephemeralStorage: 0, pods: 2 });

    expect(removePod(info, 'default/small')).toBe(bigger);
    expect(removePod(info, 'default/small')).toBeUndefined();
    expect(info.requested).toEqual({ milliCPU: 0, memory: 0, ephemeralStorage: 0, pods: 1 });
    expect(info.nonZeroRequested).toEqual({
      milliCPU: DEFAULT_MILLI_CPU_REQUEST,
      memory: DEFAULT_MEMORY_REQUEST,
      ephemeralStorage: 0,
      pods: 1,
    });
    expect(removePod(info, 'default/bare')).toBe(bare);
    expect(info.requested).toEqual({ milliCPU: 0, memory: 0, ephemeralStorage: 0, pods: 0 });
    expect(info.nonZeroRequested).toEqual({ milliCPU: 0, memory: 0, ephemeralStorage: 0, pods: 0 });
  });

  it('takes a new version of the node and keeps its pods', () => {
    const info = newNodeInfo(node, [small]);
    setNode(info, { ...node, status: { allocatable: { cpu: '2', pods: '5' } } });
    expect(info.allocatable).toEqual({ milliCPU: 2000, memory: 0, ephemeralStorage: 0, pods: 5 });
    expect(info.pods.size).toBe(1);
    expect(info.requested.milliCPU).toBe(100);
  });
});

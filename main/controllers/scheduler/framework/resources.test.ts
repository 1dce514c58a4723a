import { describe, expect, it } from 'vitest';
import type { Container, Node, Pod } from '../../../../client/api/types.js';
import {
  addPod,
  DEFAULT_MEMORY_REQUEST,
  DEFAULT_MILLI_CPU_REQUEST,
  newNodeInfo,
  nodeAllocatable,
  podInfo,
  podNonZeroRequests,
  podRequests,
  removePod,
  setNode,
} from './resources.js';

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

describe('podRequests: quantities', () => {
  it.each<[string, string, number]>([
    ['cpu', '100m', 100],
    ['cpu', '1.5', 1500],
    ['cpu', '2', 2000],
    ['cpu', '0.5', 500],
    ['cpu', '1e3', 1_000_000],
    ['cpu', '1Ki', 1_024_000],
    ['cpu', '1G', 1e12],
    ['cpu', '512Mi', 512 * Mi * 1000],
    ['cpu', '0.0001', 1], // below a millicore: rounds up, like MilliValue()
    ['memory', '512Mi', 512 * Mi],
    ['memory', '1G', 1_000_000_000],
    ['memory', '1Ki', 1024],
    ['memory', '1e3', 1000],
    ['memory', '2', 2],
    ['memory', '1.5', 2], // bytes round up, like Value()
    ['memory', '0.5', 1],
    ['memory', '100m', 1],
    ['ephemeral-storage', '1G', 1_000_000_000],
    ['ephemeral-storage', '512Mi', 512 * Mi],
    ['ephemeral-storage', '1Ki', 1024],
    ['ephemeral-storage', '1e3', 1000],
    ['ephemeral-storage', '1.5', 2],
  ])('%s %s', (resource, text, expected) => {
    const r = podRequests(pod([container({ [resource]: text })]));
    const field = { cpu: r.milliCPU, memory: r.memory, 'ephemeral-storage': r.ephemeralStorage }[resource];
    expect(field).toBe(expected);
  });

  it('counts a quantity the API server should have refused as 0', () => {
    expect(podRequests(pod([container({ cpu: 'lots', memory: '1Mi' })]))).toEqual({
      milliCPU: 0,
      memory: Mi,
      ephemeralStorage: 0,
      pods: 1,
    });
  });
});

describe('podRequests and podNonZeroRequests', () => {
  it.each<[string, Pod, { requests: [number, number, number]; nonZero: [number, number] }]>([
    ['no spec', { metadata: { name: 'p' } }, { requests: [0, 0, 0], nonZero: [0, 0] }],
    ['no containers', pod([]), { requests: [0, 0, 0], nonZero: [0, 0] }],
    [
      'a container without requests',
      pod([container()]),
      { requests: [0, 0, 0], nonZero: [DEFAULT_MILLI_CPU_REQUEST, DEFAULT_MEMORY_REQUEST] },
    ],
    [
      'containers add up',
      pod([
        container({ cpu: '250m', memory: '64Mi', 'ephemeral-storage': '1Gi' }),
        container({ cpu: '1', memory: '128Mi' }),
      ]),
      { requests: [1250, 192 * Mi, Gi], nonZero: [1250, 192 * Mi] },
    ],
    [
      'defaults apply per container and per resource',
      pod([container({ cpu: '250m' }), container({ memory: '64Mi' })]),
      {
        requests: [250, 64 * Mi, 0],
        nonZero: [250 + DEFAULT_MILLI_CPU_REQUEST, DEFAULT_MEMORY_REQUEST + 64 * Mi],
      },
    ],
    [
      'an explicit zero is not replaced by the default',
      pod([container({ cpu: '0', memory: '0' })]),
      { requests: [0, 0, 0], nonZero: [0, 0] },
    ],
    [
      'a larger init container wins, per resource',
      pod(
        [container({ cpu: '500m', memory: '64Mi' }), container({ cpu: '500m', memory: '64Mi' })],
        [container({ cpu: '2', memory: '32Mi', 'ephemeral-storage': '1Gi' })],
      ),
      { requests: [2000, 128 * Mi, Gi], nonZero: [2000, 128 * Mi] },
    ],
    [
      'init containers take the max of each other, not the sum',
      pod([container({ cpu: '100m' })], [container({ cpu: '300m' }), container({ cpu: '200m' })]),
      { requests: [300, 0, 0], nonZero: [300, DEFAULT_MEMORY_REQUEST] },
    ],
    [
      'init containers get the defaults too',
      pod([container({ cpu: '50m', memory: '10Mi' })], [container()]),
      { requests: [50, 10 * Mi, 0], nonZero: [DEFAULT_MILLI_CPU_REQUEST, DEFAULT_MEMORY_REQUEST] },
    ],
  ])('%s', (_name, p, expected) => {
    const [milliCPU, memory, ephemeralStorage] = expected.requests;
    expect(podRequests(p)).toEqual({ milliCPU, memory, ephemeralStorage, pods: 1 });
    const nonZero = podNonZeroRequests(p);
    expect([nonZero.milliCPU, nonZero.memory]).toEqual(expected.nonZero);
    expect(nonZero.ephemeralStorage).toBe(ephemeralStorage);
    expect(nonZero.pods).toBe(1);
  });
});

describe('nodeAllocatable', () => {
  const full = { cpu: '4', memory: '8Gi', 'ephemeral-storage': '100Gi', pods: '110' };
  it.each<[string, Node['status'], [number, number, number, number]]>([
    ['from allocatable', { allocatable: full, capacity: { cpu: '8' } }, [4000, 8 * Gi, 100 * Gi, 110]],
    ['from capacity when allocatable is absent', { capacity: full }, [4000, 8 * Gi, 100 * Gi, 110]],
    [
      'from capacity when allocatable is empty',
      { allocatable: {}, capacity: full },
      [4000, 8 * Gi, 100 * Gi, 110],
    ],
    [
      'missing resources are 0, with no per-resource fallback',
      { allocatable: { cpu: '1500m', memory: '1G' }, capacity: full },
      [1500, 1e9, 0, 0],
    ],
    ['no status', undefined, [0, 0, 0, 0]],
  ])('%s', (_name, status, [milliCPU, memory, ephemeralStorage, pods]) => {
    expect(nodeAllocatable({ metadata: { name: 'n' }, status })).toEqual({
      milliCPU,
      memory,
      ephemeralStorage,
      pods,
    });
  });
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

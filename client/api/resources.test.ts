import { describe, expect, it } from 'vitest';
import type { Container, Node, Pod } from './types.js';
import {
  DEFAULT_MEMORY_REQUEST,
  DEFAULT_MILLI_CPU_REQUEST,
  nodeAllocatable,
  podNonZeroRequests,
  podRequests,
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

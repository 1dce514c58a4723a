/**
 * The scheduling algorithm with the default plugins: a pod pinned to a node by name (a
 * DaemonSet pod) is checked against that node only, and when it does not fit there the
 * summary counts the other nodes as not matching its affinity, as Kubernetes reports it.
 */
import { describe, expect, it } from 'vitest';
import type { Node, Pod } from '../../../client/api/types.js';
import { SchedulingAlgorithm } from './algorithm.js';
import { DEFAULT_FILTERS, DEFAULT_SCORES } from './framework/plugins/index.js';
import { newNodeInfo, podInfo } from './framework/resources.js';

const node = (name: string, cpu: string): Node => ({
  metadata: { name },
  status: { allocatable: { cpu, memory: '4Gi', pods: '110' } },
});
const pinned = (nodeName: string, cpu: string): Pod => ({
  metadata: { name: 'ds-x', namespace: 'default' },
  spec: {
    containers: [{ name: 'c', resources: { requests: { cpu } } }],
    affinity: {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [
            { matchFields: [{ key: 'metadata.name', operator: 'In', values: [nodeName] }] },
          ],
        },
      },
    },
  },
});

describe('SchedulingAlgorithm', () => {
  const nodes = ['n0', 'n1', 'n2'].map((n) => newNodeInfo(node(n, '1')));

  it('places a pod pinned by name on its node, evaluating that node only', () => {
    const result = new SchedulingAlgorithm(DEFAULT_FILTERS, DEFAULT_SCORES).schedule(
      podInfo(pinned('n2', '100m')),
      nodes,
    );
    expect(result).toMatchObject({ kind: 'placed', nodeName: 'n2', evaluated: 1 });
  });

  it('looks a pinned pod’s node up by name when it can, without walking every node', () => {
    const unwalkable = Object.assign([...nodes], {
      filter: () => {
        throw new Error('walked every node');
      },
    });
    const result = new SchedulingAlgorithm(DEFAULT_FILTERS, DEFAULT_SCORES).schedule(
      podInfo(pinned('n1', '100m')),
      unwalkable,
      (name) => nodes.find((n) => n.name === name),
    );
    expect(result).toMatchObject({ kind: 'placed', nodeName: 'n1', evaluated: 1 });
  });

  it('reports a pinned pod that does not fit with the other nodes as not matching its affinity', () => {
    const result = new SchedulingAlgorithm(DEFAULT_FILTERS, DEFAULT_SCORES).schedule(
      podInfo(pinned('n1', '2')),
      nodes,
    );
    expect(result.kind).toBe('unschedulable');
    expect(result.kind === 'unschedulable' && result.message).toBe(
      "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't match Pod's node affinity/selector.",
    );
  });
});

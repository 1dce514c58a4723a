/**
 * Which pods a ReplicaSet deletes first: Kubernetes' ActivePodsWithRanks order, one rule per
 * row — each row's first pod must go before its second.
 */
import { describe, expect, it } from 'vitest';
import type { Pod } from '../../../client/api/types.js';
import { compareForDeletion, deletionCost, podsToDelete } from '../../../main/controllers/common/ranking.js';

const NOW = Date.parse('2026-06-01T12:00:00Z');
const ago = (s: number) => new Date(NOW - s * 1000).toISOString().replace(/\.\d+Z$/, 'Z');

interface Opts {
  node?: string;
  phase?: string;
  ready?: boolean;
  readyFor?: number;
  age?: number;
  restarts?: number;
  cost?: string;
  uid?: string;
}

function pod(name: string, o: Opts = {}): Pod {
  const phase = o.phase ?? 'Running';
  const ready = o.ready ?? phase === 'Running';
  return {
    metadata: {
      name,
      uid: o.uid ?? name,
      creationTimestamp: ago(o.age ?? 3600),
      ...(o.cost !== undefined
        ? { annotations: { 'controller.kubernetes.io/pod-deletion-cost': o.cost } }
        : {}),
    },
    spec: {
      ...(o.node !== undefined ? { nodeName: o.node } : { nodeName: 'n1' }),
      containers: [{ name: 'c' }],
    },
    status: {
      phase,
      conditions: [
        { type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: ago(o.readyFor ?? 3000) },
      ],
      containerStatuses: [{ name: 'c', restartCount: o.restarts ?? 0 }],
    },
  };
}

const rows: Array<[string, Pod, Pod]> = [
  ['unscheduled before scheduled', pod('a', { node: '' }), pod('b')],
  ['Pending before Running', pod('a', { phase: 'Pending' }), pod('b')],
  ['Pending before Unknown', pod('a', { phase: 'Pending' }), pod('b', { phase: 'Unknown' })],
  ['Unknown before Running', pod('a', { phase: 'Unknown' }), pod('b')],
  ['not ready before ready', pod('a', { ready: false }), pod('b')],
  ['lower deletion cost first', pod('a', { cost: '-5' }), pod('b', { cost: '10' })],
  ['ready for less time first (another doubling)', pod('a', { readyFor: 10 }), pod('b', { readyFor: 5000 })],
  ['more restarts first', pod('a', { restarts: 3 }), pod('b', { restarts: 1 })],
  [
    'newer first (another doubling)',
    pod('a', { age: 60, readyFor: 3000 }),
    pod('b', { age: 7200, readyFor: 3000 }),
  ],
  [
    'same doubling of age: the lower UID first',
    pod('z', { age: 3000, readyFor: 3000, uid: 'uid-a' }),
    pod('y', { age: 3100, readyFor: 3000, uid: 'uid-b' }),
  ],
];

describe('deletion order', () => {
  it.each(rows)('%s', (_why, first, second) => {
    expect(compareForDeletion({ pod: first, rank: 1 }, { pod: second, rank: 1 }, NOW)).toBeLessThan(0);
    expect(compareForDeletion({ pod: second, rank: 1 }, { pod: first, rank: 1 }, NOW)).toBeGreaterThan(0);
  });

  it('a pod doubled up on a node with its siblings goes before one alone', () => {
    const crowded = pod('crowded', { node: 'busy' });
    const alone = pod('alone', { node: 'quiet' });
    const sibling = pod('sibling', { node: 'busy' });
    expect(podsToDelete([alone, crowded], [alone, crowded, sibling], 1, NOW)).toEqual([crowded]);
  });

  it('earlier rules win over later ones: a ready, restarting pod stays before a pending one', () => {
    const pending = pod('pending', { phase: 'Pending' });
    const restarting = pod('restarting', { restarts: 50 });
    expect(podsToDelete([restarting, pending], [], 1, NOW)).toEqual([pending]);
  });

  it('reads pod-deletion-cost as an int32, anything else as 0', () => {
    expect(deletionCost(pod('a', { cost: '100' }))).toBe(100);
    expect(deletionCost(pod('a', { cost: 'x' }))).toBe(0);
    expect(deletionCost(pod('a', { cost: '99999999999' }))).toBe(0);
    expect(deletionCost(pod('a'))).toBe(0);
  });

  it('asked for more than there are, deletes them all', () => {
    const pods = [pod('a'), pod('b')];
    expect(podsToDelete(pods, pods, 5, NOW)).toHaveLength(2);
  });
});

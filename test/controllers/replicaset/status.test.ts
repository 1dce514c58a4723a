/** A ReplicaSet's status from its pods: counts, availability after minReadySeconds, ReplicaFailure. */
import { describe, expect, it } from 'vitest';
import type { Pod, ReplicaSet } from '../../../client/api/types.js';
import { calculateStatus, statusChanged } from '../../../main/controllers/replicaset/status.js';

const NOW = Date.parse('2026-06-01T12:00:00Z');
const ago = (s: number) => new Date(NOW - s * 1000).toISOString().replace(/\.\d+Z$/, 'Z');

const rs = (replicas: number, minReadySeconds = 0, conditions: ReplicaSet['status'] = {}): ReplicaSet => ({
  metadata: { name: 'web', namespace: 'default', generation: 2 },
  spec: {
    replicas,
    minReadySeconds,
    selector: { matchLabels: { app: 'web' } },
    template: { metadata: { labels: { app: 'web', tier: 'front' } } },
  },
  status: conditions,
});

const pod = (labels: Record<string, string>, readySeconds?: number): Pod => ({
  metadata: { labels },
  status: {
    phase: 'Running',
    conditions:
      readySeconds === undefined
        ? [{ type: 'Ready', status: 'False' }]
        : [{ type: 'Ready', status: 'True', lastTransitionTime: ago(readySeconds) }],
  },
});

describe('ReplicaSet status', () => {
  it('counts pods, fully labelled ones, ready and available ones (minReadySeconds)', () => {
    const pods = [
      pod({ app: 'web', tier: 'front' }, 60),
      pod({ app: 'web', tier: 'front' }, 5),
      pod({ app: 'web' }, 60),
      pod({ app: 'web', tier: 'front' }),
    ];
    expect(calculateStatus(rs(4, 30), pods, undefined, NOW)).toMatchObject({
      replicas: 4,
      fullyLabeledReplicas: 3,
      readyReplicas: 3,
      availableReplicas: 2,
      observedGeneration: 2,
      conditions: [],
    });
  });

  it.each([
    ['too few pods: FailedCreate', 3, 'FailedCreate'],
    ['too many pods: FailedDelete', 1, 'FailedDelete'],
  ])('%s', (_why, replicas, reason) => {
    const pods = [pod({ app: 'web' }, 60), pod({ app: 'web' }, 60)];
    const st = calculateStatus(rs(replicas), pods, new Error('pods "web-x" is forbidden: quota'), NOW);
    expect(st.conditions).toEqual([
      {
        type: 'ReplicaFailure',
        status: 'True',
        reason,
        message: 'pods "web-x" is forbidden: quota',
        lastTransitionTime: ago(0),
      },
    ]);
  });

  it('keeps an existing failure while writes fail, drops it once they succeed', () => {
    const failing = rs(3, 0, {
      conditions: [{ type: 'ReplicaFailure', status: 'True', reason: 'FailedCreate', message: 'first' }],
    });
    expect(calculateStatus(failing, [], new Error('second'), NOW).conditions).toEqual(
      failing.status!.conditions,
    );
    expect(calculateStatus(failing, [], undefined, NOW).conditions).toEqual([]);
  });

  it('is unchanged when counts, generation and conditions are', () => {
    const r = rs(1);
    const st = calculateStatus(r, [pod({ app: 'web', tier: 'front' }, 60)], undefined, NOW);
    expect(statusChanged(r, st)).toBe(true);
    expect(statusChanged({ ...r, status: st }, st)).toBe(false);
  });
});

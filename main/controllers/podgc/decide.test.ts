import { describe, expect, it } from 'vitest';
import type { Node, Pod } from '../../../client/api/types.js';
import { rfc3339 } from '../../../client/util/clock.js';
import {
  failedStatus,
  isOutOfService,
  isUnscheduledTerminating,
  NODE_GONE,
  orphanCheck,
  terminatedPodsToDelete,
} from './decide.js';

const NOW = Date.parse('2026-01-01T12:00:00Z');

function pod(
  name: string,
  opts: { phase?: string; reason?: string; created?: string; deleting?: boolean; nodeName?: string } = {},
): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: 'default',
      creationTimestamp: opts.created ?? '2026-01-01T00:00:00Z',
      ...(opts.deleting ? { deletionTimestamp: '2026-01-01T11:00:00Z' } : {}),
    },
    spec: { ...(opts.nodeName ? { nodeName: opts.nodeName } : {}), containers: [{ name: 'c' }] },
    status: { phase: opts.phase ?? 'Running', ...(opts.reason ? { reason: opts.reason } : {}) },
  };
}

function node(ready: string, taints: string[] = []): Node {
  return {
    metadata: { name: 'n' },
    spec: { taints: taints.map((key) => ({ key, effect: 'NoExecute' })) },
    status: { conditions: [{ type: 'Ready', status: ready }] },
  };
}

const names = (pods: Pod[]) => pods.map((p) => p.metadata?.name);

describe('finished pods beyond the threshold', () => {
  it('go oldest first, until the threshold remain', () => {
    const pods = [
      pod('c', { phase: 'Succeeded', created: '2026-01-01T00:00:03Z' }),
      pod('a', { phase: 'Failed', created: '2026-01-01T00:00:05Z' }),
      pod('b', { phase: 'Succeeded', created: '2026-01-01T00:00:01Z' }),
      pod('running', { created: '2026-01-01T00:00:00Z' }),
    ];
    expect(names(terminatedPodsToDelete(pods, 1))).toEqual(['b', 'c']);
    expect(names(terminatedPodsToDelete(pods, 3))).toEqual([]);
  });

  it('evicted pods go before older ones; a tie in age goes by name', () => {
    const pods = [
      pod('old', { phase: 'Failed', created: '2026-01-01T00:00:01Z' }),
      pod('evicted', { phase: 'Failed', reason: 'Evicted', created: '2026-01-01T00:00:09Z' }),
      pod('y', { phase: 'Succeeded', created: '2026-01-01T00:00:05Z' }),
      pod('x', { phase: 'Succeeded', created: '2026-01-01T00:00:05Z' }),
    ];
    expect(names(terminatedPodsToDelete(pods, 1))).toEqual(['evicted', 'old', 'x']);
  });

  it('pods already being deleted are neither counted nor chosen; threshold 0 keeps everything', () => {
    const pods = [
      pod('going', { phase: 'Failed', deleting: true, created: '2026-01-01T00:00:01Z' }),
      pod('a', { phase: 'Failed', created: '2026-01-01T00:00:02Z' }),
      pod('b', { phase: 'Failed', created: '2026-01-01T00:00:03Z' }),
    ];
    expect(names(terminatedPodsToDelete(pods, 1))).toEqual(['a']);
    expect(terminatedPodsToDelete(pods, 0)).toEqual([]);
  });
});

describe('the pods of a missing node', () => {
  it('wait out the quarantine, counted from when the node was first missed', () => {
    expect(orphanCheck(NOW, NOW, 40_000)).toEqual({ action: 'wait', ms: 40_000 });
    expect(orphanCheck(NOW - 39_000, NOW, 40_000)).toEqual({ action: 'wait', ms: 1_000 });
  });
  it('then go once the API confirms the node is gone', () => {
    expect(orphanCheck(NOW - 40_000, NOW, 40_000)).toEqual({ action: 'verify' });
  });
});

describe('terminating pods no agent will finish', () => {
  it('an unscheduled pod marked for deletion', () => {
    expect(isUnscheduledTerminating(pod('p', { deleting: true }))).toBe(true);
    expect(isUnscheduledTerminating(pod('p', { deleting: true, nodeName: 'n' }))).toBe(false);
    expect(isUnscheduledTerminating(pod('p'))).toBe(false);
  });
  it('pods of a node that is not Ready and tainted out-of-service', () => {
    expect(isOutOfService(node('Unknown', ['node.kubernetes.io/out-of-service']))).toBe(true);
    expect(isOutOfService(node('False', ['node.kubernetes.io/out-of-service']))).toBe(true);
    // A node that is still Ready is running its pods; the taint alone does not end them here.
    expect(isOutOfService(node('True', ['node.kubernetes.io/out-of-service']))).toBe(false);
    expect(isOutOfService(node('Unknown', ['node.kubernetes.io/unreachable']))).toBe(false);
  });
});

describe('the status written before a forced deletion', () => {
  it('is Failed with a DisruptionTarget condition saying the node is gone', () => {
    const running = pod('p', { nodeName: 'gone' });
    running.status!.conditions = [{ type: 'Ready', status: 'True' }];
    expect(failedStatus(running, NOW, NODE_GONE)).toEqual({
      phase: 'Failed',
      conditions: [
        { type: 'Ready', status: 'True' },
        {
          type: 'DisruptionTarget',
          status: 'True',
          reason: 'DeletionByPodGC',
          message: 'PodGC: node no longer exists',
          lastTransitionTime: rfc3339(NOW),
        },
      ],
    });
  });

  it('keeps the time a DisruptionTarget condition already had, and replaces its reason', () => {
    const evicting = pod('p', { nodeName: 'gone' });
    evicting.status!.conditions = [
      {
        type: 'DisruptionTarget',
        status: 'True',
        reason: 'DeletionByTaintManager',
        lastTransitionTime: '2026-01-01T11:00:00Z',
      },
    ];
    expect(failedStatus(evicting, NOW, NODE_GONE)?.conditions).toEqual([
      {
        type: 'DisruptionTarget',
        status: 'True',
        reason: 'DeletionByPodGC',
        message: 'PodGC: node no longer exists',
        lastTransitionTime: '2026-01-01T11:00:00Z',
      },
    ]);
  });

  it('is Failed without a condition when none is given; nothing for a pod that already finished', () => {
    expect(failedStatus(pod('p'), NOW)).toEqual({ phase: 'Failed' });
    expect(failedStatus(pod('p', { phase: 'Succeeded' }), NOW, NODE_GONE)).toBeUndefined();
  });
});

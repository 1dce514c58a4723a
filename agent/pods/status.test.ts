import { describe, expect, it } from 'vitest';
import type { Pod, PodCondition } from '../../client/api/types.js';
import { rfc3339 } from '../../client/util/clock.js';
import { newContainerRecord } from './containers.js';
import { mergeConditions, mergeStatus, podStatus, type PodRuntimeState } from './status.js';

const NOW = Date.parse('2026-01-01T00:00:00Z');

const disruption: PodCondition = {
  type: 'DisruptionTarget',
  status: 'True',
  reason: 'DeletionByTaintManager',
  message: 'Taint manager: deleting due to NoExecute taint',
  lastTransitionTime: '2025-12-31T23:59:00Z',
};

function pod(conditions: PodCondition[] = [], gates: string[] = []): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', namespace: 'default', uid: 'u1' },
    spec: {
      containers: [{ name: 'main', command: ['serve'] }],
      // Not in the generated PodSpec type yet: the agent reads it all the same.
      ...(gates.length ? { readinessGates: gates.map((conditionType) => ({ conditionType })) } : {}),
    } as Pod['spec'],
    status: { phase: 'Running', conditions },
  };
}

/** The pod's one container running, ready or not. */
function running(ready: boolean): PodRuntimeState {
  const record = newContainerRecord('main');
  record.running = {
    id: 'u1/main/0',
    podUid: 'u1',
    name: 'main',
    restartCount: 0,
    pid: 1,
    startedAt: NOW,
    exited: new Promise(() => undefined),
  };
  record.waiting = undefined;
  record.ready = ready;
  record.started = true;
  return {
    containers: new Map([['main', record]]),
    initialized: true,
    startTime: NOW,
    hostIP: '10.0.0.7',
    runtimeName: 'process',
  };
}

const byType = (conditions: PodCondition[] | undefined, type: string) =>
  conditions?.find((c) => c.type === type);

describe('pod conditions the agent does not own', () => {
  it('carries them over untouched, in their place', () => {
    const status = podStatus(pod([{ type: 'PodScheduled', status: 'True' }, disruption]), running(true), NOW);
    expect(status.conditions?.map((c) => c.type)).toEqual([
      'PodScheduled',
      'DisruptionTarget',
      'Initialized',
      'ContainersReady',
      'Ready',
    ]);
    expect(byType(status.conditions, 'DisruptionTarget')).toEqual(disruption);
  });

  it('also on a pod that failed admission', () => {
    const state = { ...running(false), failed: { reason: 'OutOfcpu', message: 'no room' } };
    expect(byType(podStatus(pod([disruption]), state, NOW).conditions, 'DisruptionTarget')).toEqual(
      disruption,
    );
  });

  it("merges with the API's copy: the agent's conditions from ours, the others' from the API", () => {
    const oursReady: PodCondition = { type: 'Ready', status: 'True', lastTransitionTime: rfc3339(NOW) };
    const staleOther: PodCondition = { type: 'example.com/gate', status: 'False' };
    const api: PodCondition[] = [
      { type: 'Ready', status: 'False', reason: 'ContainersNotReady' },
      { type: 'example.com/gate', status: 'True' },
      disruption,
    ];
    expect(mergeConditions(api, [staleOther, oursReady])).toEqual([
      oursReady,
      { type: 'example.com/gate', status: 'True' },
      disruption,
    ]);
    // A condition another party removed stays removed; nothing else of the status changes.
    expect(
      mergeStatus({ phase: 'Running', conditions: [] }, { phase: 'Succeeded', conditions: [staleOther] }),
    ).toEqual({ phase: 'Succeeded', conditions: [] });
  });
});

describe('a phase the API holds as terminal', () => {
  it('stays, with its reason and message (the API would refuse to leave it)', () => {
    expect(
      mergeStatus(
        { phase: 'Failed', reason: 'DeletionByPodGC', message: 'the node is gone' },
        { phase: 'Running', conditions: [] },
      ),
    ).toEqual({ phase: 'Failed', reason: 'DeletionByPodGC', message: 'the node is gone', conditions: [] });
    expect(mergeStatus({ phase: 'Running' }, { phase: 'Succeeded', conditions: [] }).phase).toBe('Succeeded');
  });
});

describe('readiness gates', () => {
  const ready = (p: Pod, state = running(true)) => byType(podStatus(p, state, NOW).conditions, 'Ready');

  it("keep Ready False, in Kubernetes' words, while a gate's condition is missing or not True", () => {
    expect(ready(pod([], ['example.com/lb']))).toMatchObject({
      status: 'False',
      reason: 'ReadinessGatesNotReady',
      message: 'corresponding condition of pod readiness gate "example.com/lb" does not exist.',
    });
    expect(
      ready(
        pod(
          [
            { type: 'example.com/lb', status: 'False' },
            { type: 'example.com/dns', status: 'Unknown' },
          ],
          ['example.com/lb', 'example.com/dns', 'example.com/fw'],
        ),
      ),
    ).toMatchObject({
      status: 'False',
      reason: 'ReadinessGatesNotReady',
      message:
        'the status of pod readiness gate "example.com/lb" is not "True", but False, ' +
        'the status of pod readiness gate "example.com/dns" is not "True", but Unknown, ' +
        'corresponding condition of pod readiness gate "example.com/fw" does not exist.',
    });
  });

  it('let the pod be Ready once every gate is True; ContainersReady never looks at them', () => {
    const p = pod([{ type: 'example.com/lb', status: 'True' }], ['example.com/lb']);
    expect(ready(p)).toMatchObject({ status: 'True' });
    expect(
      byType(podStatus(pod([], ['example.com/lb']), running(true), NOW).conditions, 'ContainersReady'),
    ).toMatchObject({ status: 'True' });
  });

  it('say nothing while the containers are not ready: Ready says what ContainersReady says', () => {
    expect(ready(pod([], ['example.com/lb']), running(false))).toMatchObject({
      status: 'False',
      reason: 'ContainersNotReady',
      message: 'containers with unready status: [main]',
    });
  });
});

/**
 * Pod conditions the agent does not own, against a real control plane and the agent's pod
 * manager on the hollow runtime: a DisruptionTarget (the taint manager's) or any custom
 * condition stays through the agent's status rounds, as the kubelet keeps every condition
 * but PodScheduled, Initialized, ContainersReady and Ready; and spec.readinessGates holds
 * Ready False until their conditions are True.
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import { quietLogger } from '../../agent/logger.js';
import { PodManager } from '../../agent/pods/manager.js';
import { HOLLOW_EXIT_CODE_ENV, HOLLOW_RUN_SECONDS_ENV, HollowRuntime } from '../../agent/runtime/hollow.js';
import { isConflict } from '../../client/api/errors.js';
import type { Pod, PodCondition } from '../../client/api/types.js';
import type { Client } from '../../client/client.js';
import { EventRecorder } from '../../client/events/recorder.js';
import { inProcessClient } from '../../client/inprocess.js';
import { realClock } from '../../client/util/clock.js';
import { registerSmallNode } from '../support/agentproc.js';
import { startTestControlPlane, type TestControlPlane } from '../support/controlplane.js';
import { eventually } from '../support/wait.js';

const NODE = 'lab-conditions';

let t: TestControlPlane;
let admin: Client;
let manager: PodManager;

beforeEach(async () => {
  t = await startTestControlPlane({ controllers: false });
  admin = t.cp.client();
  await registerSmallNode(admin, NODE);
  const node = inProcessClient(t.cp.api, { name: `system:node:${NODE}`, role: 'node', nodeName: NODE });
  manager = new PodManager({
    client: node,
    nodeName: NODE,
    clock: realClock,
    logger: quietLogger(),
    recorder: new EventRecorder(node, { component: 'kubelab-agent', host: NODE }),
    processes: { runtime: new HollowRuntime(realClock), scheme: 'hollow' },
    hostIP: () => '10.0.0.7',
    crashLoopBackoff: { initialMs: 100, maxMs: 200 },
  });
  await manager.start();
});

afterEach(async () => {
  await manager.stop();
  await t.close();
});

const get = (name: string) => admin.get('Pod', name, { namespace: 'default' });
const conditionOf = (p: Pod, type: string) => p.status?.conditions?.find((c) => c.type === type);

/** Sets a condition as a controller does: read, change, write the status; again on a conflict. */
async function setCondition(name: string, condition: PodCondition): Promise<void> {
  for (;;) {
    const p = await get(name);
    const others = (p.status?.conditions ?? []).filter((c) => c.type !== condition.type);
    try {
      await admin.updateStatus<Pod>({ ...p, status: { ...p.status, conditions: [...others, condition] } });
      return;
    } catch (err) {
      if (!isConflict(err)) throw err;
    }
  }
}

it("keeps a DisruptionTarget and a custom condition through the agent's status rounds", async () => {
  // A container that ends every 50 ms and is restarted: each restart is a status round.
  await admin.create<Pod>({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'flaky', namespace: 'default' },
    spec: {
      nodeName: NODE,
      containers: [
        {
          name: 'main',
          command: ['serve'],
          env: [
            { name: HOLLOW_RUN_SECONDS_ENV, value: '0.05' },
            { name: HOLLOW_EXIT_CODE_ENV, value: '1' },
          ],
        },
      ],
    },
  });
  await eventually(async () => (await get('flaky')).status?.phase === 'Running', 'the pod to run');

  const disruption: PodCondition = {
    type: 'DisruptionTarget',
    status: 'True',
    reason: 'DeletionByTaintManager',
    message: 'Taint manager: deleting due to NoExecute taint',
    lastTransitionTime: '2026-01-01T00:00:00Z',
  };
  const custom: PodCondition = {
    type: 'example.com/Drained',
    status: 'False',
    reason: 'StillServing',
    lastTransitionTime: '2026-01-01T00:00:01Z',
  };
  await setCondition('flaky', disruption);
  await setCondition('flaky', custom);
  const restartsThen = (await get('flaky')).status?.containerStatuses?.[0].restartCount ?? 0;
  const writesThen = manager.statuses.writes;

  // Several rounds: three more restarts, each written by the agent.
  await eventually(
    async () => ((await get('flaky')).status?.containerStatuses?.[0].restartCount ?? 0) >= restartsThen + 3,
    'three more restarts',
    20_000,
  );
  await manager.settled();
  expect(manager.statuses.writes).toBeGreaterThanOrEqual(writesThen + 3);
  const p = await get('flaky');
  expect(conditionOf(p, 'DisruptionTarget')).toEqual(disruption);
  expect(conditionOf(p, 'example.com/Drained')).toEqual(custom);
  // The agent's own conditions are still there, and still its.
  expect(conditionOf(p, 'Initialized')?.status).toBe('True');
  expect(conditionOf(p, 'Ready')).toBeTruthy();
}, 30_000);

it("holds Ready False while a readiness gate's condition is missing or not True", async () => {
  await admin.create({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'gated', namespace: 'default' },
    spec: {
      nodeName: NODE,
      containers: [{ name: 'main', command: ['serve'] }],
      readinessGates: [{ conditionType: 'example.com/lb' }],
    },
  } as Pod);
  await eventually(
    async () => conditionOf(await get('gated'), 'ContainersReady')?.status === 'True',
    'the containers to be ready',
  );
  await manager.settled();
  expect(conditionOf(await get('gated'), 'Ready')).toMatchObject({
    status: 'False',
    reason: 'ReadinessGatesNotReady',
    message: 'corresponding condition of pod readiness gate "example.com/lb" does not exist.',
  });

  await setCondition('gated', { type: 'example.com/lb', status: 'True' });
  await eventually(
    async () => conditionOf(await get('gated'), 'Ready')?.status === 'True',
    'the pod to be Ready',
  );

  await setCondition('gated', { type: 'example.com/lb', status: 'False' });
  await eventually(
    async () => conditionOf(await get('gated'), 'Ready')?.status === 'False',
    'the pod to be unready again',
  );
  expect(conditionOf(await get('gated'), 'Ready')).toMatchObject({
    reason: 'ReadinessGatesNotReady',
    message: 'the status of pod readiness gate "example.com/lb" is not "True", but False',
  });
  expect(conditionOf(await get('gated'), 'example.com/lb')?.status).toBe('False');
});

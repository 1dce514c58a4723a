/**
 * The agent's pod manager against a real control plane, with the hollow runtime (no
 * processes): admission, phases and conditions, restart policies with crash-loop backoff,
 * graceful deletion ending in the final delete — what a user sees through the API.
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import { quietLogger } from '../../agent/logger.js';
import { PodManager } from '../../agent/pods/manager.js';
import { HOLLOW_EXIT_CODE_ENV, HOLLOW_RUN_SECONDS_ENV, HollowRuntime } from '../../agent/runtime/hollow.js';
import type { Pod } from '../../client/api/types.js';
import type { Client } from '../../client/client.js';
import { EventRecorder } from '../../client/events/recorder.js';
import { inProcessClient } from '../../client/inprocess.js';
import { realClock } from '../../client/util/clock.js';
import { registerSmallNode } from '../support/agentproc.js';
import { startTestControlPlane, type TestControlPlane } from '../support/controlplane.js';
import { eventually } from '../support/wait.js';

let t: TestControlPlane;
let admin: Client;
let manager: PodManager;

beforeEach(async () => {
  t = await startTestControlPlane({ controllers: false });
  admin = t.cp.client();
  await registerSmallNode(admin, 'lab-1');
  const node = inProcessClient(t.cp.api, { name: 'system:node:lab-1', role: 'node', nodeName: 'lab-1' });
  const runtime = new HollowRuntime(realClock);
  manager = new PodManager({
    client: node,
    nodeName: 'lab-1',
    clock: realClock,
    logger: quietLogger(),
    recorder: new EventRecorder(node, { component: 'kubelab-agent', host: 'lab-1' }),
    processes: { runtime, scheme: 'hollow' },
    hostIP: () => '10.0.0.7',
    crashLoopBackoff: { initialMs: 300, maxMs: 2_000 },
  });
  await manager.start();
});

afterEach(async () => {
  await manager.stop();
  await t.close();
});

function pod(
  name: string,
  spec: Partial<NonNullable<Pod['spec']>> = {},
  env: Record<string, string> = {},
): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default' },
    spec: {
      nodeName: 'lab-1',
      containers: [
        {
          name: 'main',
          command: ['serve'],
          env: Object.entries(env).map(([n, value]) => ({ name: n, value })),
        },
      ],
      ...spec,
    },
  };
}

const get = (name: string) => admin.get('Pod', name, { namespace: 'default' });
const condition = (p: Pod, type: string) => p.status?.conditions?.find((c) => c.type === type)?.status;

it('runs a pod: Running, Ready, with its container running and the node as host', async () => {
  await admin.create(pod('web'));
  await eventually(async () => (await get('web')).status?.phase === 'Running', 'Running');
  const p = await get('web');
  expect(condition(p, 'Ready')).toBe('True');
  expect(condition(p, 'ContainersReady')).toBe('True');
  expect(condition(p, 'Initialized')).toBe('True');
  expect(p.status?.hostIP).toBe('10.0.0.7');
  expect(p.status?.startTime).toBeTruthy();
  expect(p.status?.containerStatuses?.[0]).toMatchObject({
    name: 'main',
    ready: true,
    restartCount: 0,
    started: true,
  });
  expect(p.status?.containerStatuses?.[0].state?.running?.startedAt).toBeTruthy();
});

it('OnFailure restarts a failing container with growing backoff; Never fails the pod with the exit code', async () => {
  await admin.create(
    pod(
      'flaky',
      { restartPolicy: 'OnFailure' },
      { [HOLLOW_RUN_SECONDS_ENV]: '0.05', [HOLLOW_EXIT_CODE_ENV]: '3' },
    ),
  );
  const seen: string[] = [];
  await eventually(
    async () => {
      const s = (await get('flaky')).status?.containerStatuses?.[0];
      const waiting = s?.state?.waiting?.reason;
      if (waiting && !seen.includes(waiting)) seen.push(waiting);
      return (s?.restartCount ?? 0) >= 3;
    },
    'three restarts',
    15_000,
    20,
  );
  const s = (await get('flaky')).status!.containerStatuses![0];
  expect(seen).toContain('CrashLoopBackOff');
  expect(s.lastState?.terminated).toMatchObject({ exitCode: 3, reason: 'Error' });
  expect((await get('flaky')).status?.phase).toBe('Running');

  await admin.create(
    pod(
      'once',
      { restartPolicy: 'Never' },
      { [HOLLOW_RUN_SECONDS_ENV]: '0.05', [HOLLOW_EXIT_CODE_ENV]: '3' },
    ),
  );
  await eventually(async () => (await get('once')).status?.phase === 'Failed', 'Failed');
  const failed = await get('once');
  expect(failed.status?.containerStatuses?.[0].state?.terminated).toMatchObject({
    exitCode: 3,
    reason: 'Error',
  });
  expect(failed.status?.containerStatuses?.[0].restartCount).toBe(0);
  expect(condition(failed, 'Ready')).toBe('False');

  await admin.create(pod('job', { restartPolicy: 'OnFailure' }, { [HOLLOW_RUN_SECONDS_ENV]: '0.05' }));
  await eventually(async () => (await get('job')).status?.phase === 'Succeeded', 'Succeeded');
}, 30_000);

it('deleting a pod stops its containers and removes it', async () => {
  await admin.create(pod('web'));
  await eventually(async () => (await get('web')).status?.phase === 'Running', 'Running');
  await admin.delete('Pod', 'web', { namespace: 'default' });
  expect((await get('web')).metadata?.deletionTimestamp).toBeTruthy();
  await eventually(
    async () => (await admin.list('Pod', { namespace: 'default' })).items.length === 0,
    'the pod to be gone',
  );
});

it('refuses what the node cannot run, with the reason', async () => {
  await admin.create(
    pod('huge', { containers: [{ name: 'main', command: ['x'], resources: { requests: { cpu: '3' } } }] }),
  );
  await eventually(async () => (await get('huge')).status?.phase === 'Failed', 'Failed');
  const huge = await get('huge');
  expect(huge.status?.reason).toBe('OutOfcpu');
  expect(huge.status?.message).toBe(
    "Pod was rejected: Node didn't have enough resource: cpu, requested: 3000, used: 0, capacity: 2000",
  );

  await admin.create(pod('boxed', { containers: [{ name: 'main', image: 'nginx:1.27' }] }));
  await eventually(async () => (await get('boxed')).status?.phase === 'Failed', 'Failed');
  expect((await get('boxed')).status?.message).toContain(
    'names image nginx:1.27, but neither docker nor podman is installed on node lab-1',
  );
});

/**
 * The Job and TTL-after-finished controllers on a fake clock against a real control plane: the
 * test plays the agents (pods run, succeed or fail when it says), moves the clock, and looks at
 * what a user would see — pods, the Job's status and conditions, events.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Job, Pod } from '../../client/api/types.js';
import type { Client } from '../../client/client.js';
import { rfc3339, type FakeClock } from '../../client/util/clock.js';
import { JobController } from '../../main/controllers/job/controller.js';
import { TTLAfterFinishedController } from '../../main/controllers/ttlafterfinished/controller.js';
import { startFakeClockControllers, type FakeClockControllers } from '../support/fakeclockcontrollers.js';

let h: FakeClockControllers<[JobController, TTLAfterFinishedController]>;
let c: Client;
let clock: FakeClock;

beforeEach(async () => {
  h = await startFakeClockControllers(
    (ctx) => [new JobController(ctx), new TTLAfterFinishedController(ctx)],
    ['Job', 'Pod'],
  );
  ({ c, clock } = h);
});

afterEach(() => h.stop());

const settle = () => h.settle();
const pass = (seconds: number) => h.pass(seconds);

const allPods = async () => (await c.list('Pod', { namespace: 'default' })).items;
const live = async () =>
  (await allPods()).filter(
    (p) => !p.metadata?.deletionTimestamp && p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed',
  );
const get = (name = 'work') => c.get('Job', name, { namespace: 'default' });
const cond = async (type: string, name = 'work') =>
  (await get(name)).status?.conditions?.find((x) => x.type === type);

/** Plays the agent: the pod ends in `phase`. */
async function end(pod: Pod, phase: 'Succeeded' | 'Failed'): Promise<void> {
  const fresh = await c.get('Pod', pod.metadata!.name!, { namespace: 'default' });
  await c.updateStatus<Pod>({
    ...fresh,
    status: {
      phase,
      containerStatuses: [
        { name: 'c', restartCount: 0, state: { terminated: { exitCode: phase === 'Succeeded' ? 0 : 1 } } },
      ],
    },
  });
  await settle();
}

function job(spec: Partial<NonNullable<Job['spec']>> = {}, name = 'work'): Job {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name, namespace: 'default' },
    spec: {
      template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'backup:1' }] } },
      ...spec,
    },
  };
}

const events = async (reason: string) =>
  (await c.list('Event', { namespace: 'default' })).items
    .filter((e) => e.reason === reason)
    .map((e) => e.message);

describe('Job', () => {
  it('runs completions pods, parallelism at a time, counts each success once, then is Complete', async () => {
    await c.create(job({ completions: 3, parallelism: 2 }));
    await settle();
    let pods = await live();
    expect(pods).toHaveLength(2);
    expect(pods[0].metadata?.finalizers).toEqual(['batch.kubernetes.io/job-tracking']);
    expect(pods[0].metadata?.labels?.['batch.kubernetes.io/job-name']).toBe('work');
    expect((await get()).status).toMatchObject({ active: 2, startTime: rfc3339(clock.now()) });

    await end(pods[0], 'Succeeded');
    pods = await live();
    expect(pods).toHaveLength(2);
    expect((await get()).status).toMatchObject({ succeeded: 1, active: 2, uncountedTerminatedPods: {} });
    const finished = (await allPods()).find((p) => p.status?.phase === 'Succeeded')!;
    expect(finished.metadata?.finalizers ?? []).toEqual([]);

    for (const p of pods) await end(p, 'Succeeded');
    await settle();
    expect(await live()).toHaveLength(0);
    const st = (await get()).status!;
    expect(st).toMatchObject({ succeeded: 3, failed: 0, active: 0, completionTime: rfc3339(clock.now()) });
    expect(await cond('Complete')).toMatchObject({ status: 'True', reason: 'CompletionsReached' });
    expect(await events('Completed')).toEqual(['Job completed']);
    expect(await events('SuccessfulCreate')).toHaveLength(3);
  });

  it('backs off 10 s, then 20 s, after failures and fails past backoffLimit', async () => {
    await c.create(job({ backoffLimit: 2 }));
    await settle();
    await end((await live())[0], 'Failed');
    expect(await live()).toHaveLength(0);
    await pass(9);
    expect(await live()).toHaveLength(0);
    await pass(2);
    expect(await live()).toHaveLength(1);
    await end((await live())[0], 'Failed');
    await pass(19);
    expect(await live()).toHaveLength(0);
    await pass(2);
    expect(await live()).toHaveLength(1);
    await end((await live())[0], 'Failed');
    expect(await cond('Failed')).toMatchObject({
      status: 'True',
      reason: 'BackoffLimitExceeded',
      message: 'Job has reached the specified backoff limit',
    });
    await pass(60);
    expect(await live()).toHaveLength(0);
    expect((await get()).status).toMatchObject({ failed: 3, active: 0 });
    expect(await events('BackoffLimitExceeded')).toEqual(['Job has reached the specified backoff limit']);
  });

  it('fails with DeadlineExceeded after activeDeadlineSeconds, deleting its pods', async () => {
    await c.create(job({ activeDeadlineSeconds: 30, parallelism: 2, completions: 4 }));
    await settle();
    expect(await live()).toHaveLength(2);
    await pass(29);
    expect(await cond('Failed')).toBeUndefined();
    await pass(2);
    expect(await cond('Failed')).toMatchObject({ reason: 'DeadlineExceeded' });
    expect(await live()).toHaveLength(0);
    // The deleted pods lose their finalizer and are counted, once.
    await settle();
    expect((await allPods()).every((p) => !p.metadata?.finalizers?.length)).toBe(true);
    expect((await get()).status?.failed).toBe(2);
  });

  it('Indexed: one pod per index with JOB_COMPLETION_INDEX, a failed index retried, completedIndexes as ranges', async () => {
    await c.create(job({ completionMode: 'Indexed', completions: 3, parallelism: 3 }));
    await settle();
    const pods = await live();
    const byIndex = new Map(
      pods.map((p) => [p.metadata?.annotations?.['batch.kubernetes.io/job-completion-index'], p]),
    );
    expect([...byIndex.keys()].sort()).toEqual(['0', '1', '2']);
    expect(byIndex.get('1')?.metadata?.name).toMatch(/^work-1-[a-z0-9]{5}$/);
    expect(byIndex.get('1')?.spec?.hostname).toBe('work-1');
    expect(byIndex.get('1')?.spec?.containers?.[0].env).toEqual([
      {
        name: 'JOB_COMPLETION_INDEX',
        valueFrom: {
          fieldRef: { fieldPath: "metadata.annotations['batch.kubernetes.io/job-completion-index']" },
        },
      },
    ]);
    await end(byIndex.get('1')!, 'Succeeded');
    await end(byIndex.get('2')!, 'Succeeded');
    expect((await get()).status?.completedIndexes).toBe('1-2');
    await end(byIndex.get('0')!, 'Failed');
    await pass(11);
    const retry = await live();
    expect(retry.map((p) => p.metadata?.annotations?.['batch.kubernetes.io/job-completion-index'])).toEqual([
      '0',
    ]);
    await end(retry[0], 'Succeeded');
    expect((await get()).status).toMatchObject({ completedIndexes: '0-2', succeeded: 3, failed: 1 });
    expect(await cond('Complete')).toMatchObject({ status: 'True' });
  });

  it('suspended, deletes its pods and says so; resumed, starts again with a new start time', async () => {
    await c.create(job({ parallelism: 2, completions: 2 }));
    await settle();
    expect(await live()).toHaveLength(2);
    await c.patch('Job', 'work', { spec: { suspend: true } }, { namespace: 'default' });
    await settle();
    await settle();
    expect(await live()).toHaveLength(0);
    expect(await cond('Suspended')).toMatchObject({ status: 'True', reason: 'JobSuspended' });
    expect((await get()).status?.startTime).toBeUndefined();
    await pass(5);
    await c.patch('Job', 'work', { spec: { suspend: false } }, { namespace: 'default' });
    await settle();
    // The pods the suspension deleted count as failed, as in Kubernetes: two failures, 20 s of backoff.
    expect((await get()).status?.failed).toBe(2);
    await pass(15);
    expect(await live()).toHaveLength(2);
    expect(await cond('Suspended')).toMatchObject({ status: 'False', reason: 'JobResumed' });
    expect((await get()).status?.startTime).toBe(rfc3339(clock.now() - 15_000));
  });

  it('is deleted ttlSecondsAfterFinished after it finished', async () => {
    await c.create(job({ ttlSecondsAfterFinished: 60 }));
    await settle();
    await end((await live())[0], 'Succeeded');
    expect(await cond('Complete')).toMatchObject({ status: 'True' });
    await pass(59);
    expect((await get()).metadata?.deletionTimestamp).toBeUndefined();
    await pass(2);
    // Foreground deletion: the garbage collector (not running here) would remove the pods first.
    const deleting = await c.get('Job', 'work', { namespace: 'default' }).catch(() => undefined);
    expect(deleting === undefined || deleting.metadata?.deletionTimestamp !== undefined).toBe(true);
  });
});

/**
 * The CronJob controller on a fake clock against a real control plane: Jobs start at their
 * schedule times; a control plane asleep through ten of them starts one Job on waking, for the
 * latest, and says so; Forbid, Replace, startingDeadlineSeconds, suspend and the history limits
 * behave as in Kubernetes. The test plays the Job controller where it matters (marking Jobs done).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CronJob, Job } from '../../client/api/types.js';
import type { Client } from '../../client/client.js';
import { FakeClock, rfc3339 } from '../../client/util/clock.js';
import { CronJobController } from '../../main/controllers/cronjob/controller.js';
import { startFakeClockControllers, type FakeClockControllers } from '../support/fakeclockcontrollers.js';

let h: FakeClockControllers<[CronJobController]>;
let c: Client;
let clock: FakeClock;

beforeEach(async () => {
  // The fake clock starts at the API's own time (creationTimestamp comes from it), away from a
  // minute boundary, so no schedule time falls between the create and the clock.
  while (Date.now() % 60_000 < 2_000 || Date.now() % 60_000 > 58_000)
    await new Promise((r) => setTimeout(r, 100));
  h = await startFakeClockControllers(
    (ctx) => [new CronJobController(ctx)],
    ['CronJob', 'Job'],
    new FakeClock(Date.now()),
  );
  ({ c, clock } = h);
});

afterEach(() => h.stop());

const settle = () => h.settle();
const pass = (seconds: number) => h.pass(seconds);

/** The machine sleeps: time jumps at once, and the controller wakes to it. */
async function sleep(seconds: number): Promise<void> {
  clock.advance(seconds * 1000);
  await settle();
}

const jobs = async () =>
  (await c.list('Job', { namespace: 'default' })).items.filter((j) => !j.metadata?.deletionTimestamp);
const get = () => c.get('CronJob', 'backup', { namespace: 'default' });
const events = async (reason: string) =>
  (await c.list('Event', { namespace: 'default' })).items
    .filter((e) => e.reason === reason)
    .map((e) => e.message);

async function create(spec: Partial<NonNullable<CronJob['spec']>> = {}): Promise<void> {
  await c.create<CronJob>({
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: { name: 'backup', namespace: 'default' },
    spec: {
      schedule: '* * * * *',
      jobTemplate: {
        metadata: { labels: { app: 'backup' } },
        spec: {
          template: { spec: { restartPolicy: 'OnFailure', containers: [{ name: 'c', image: 'restic:1' }] } },
        },
      },
      ...spec,
    },
  });
  await settle();
}

/** Plays the Job controller: the Job finished. */
async function finish(job: Job, type: 'Complete' | 'Failed'): Promise<void> {
  const now = rfc3339(clock.now());
  await c.updateStatus<Job>({
    ...job,
    status: {
      startTime: job.status?.startTime ?? now,
      ...(type === 'Complete' ? { completionTime: now, succeeded: 1 } : { failed: 1 }),
      conditions: [{ type, status: 'True', lastTransitionTime: now }],
    },
  });
  await settle();
}

describe('CronJob', () => {
  it('starts a Job at each schedule time, named for the minute, and keeps its status', async () => {
    await create();
    expect(await jobs()).toHaveLength(0);
    await pass(60);
    const [first] = await jobs();
    const minute = Math.floor(clock.now() / 60_000) * 60_000;
    expect(first.metadata?.name).toBe(`backup-${minute / 60_000}`);
    expect(first.metadata?.labels).toEqual({ app: 'backup' });
    expect(first.metadata?.annotations?.['batch.kubernetes.io/cronjob-scheduled-timestamp']).toBe(
      rfc3339(minute),
    );
    expect(first.metadata?.ownerReferences?.[0]).toMatchObject({
      kind: 'CronJob',
      name: 'backup',
      controller: true,
    });
    const st = (await get()).status!;
    expect(st.lastScheduleTime).toBe(rfc3339(minute));
    expect(st.active?.map((r) => r.name)).toEqual([first.metadata?.name]);
    await finish(first, 'Complete');
    const done = (await get()).status!;
    expect(done.active ?? []).toEqual([]);
    expect(done.lastSuccessfulTime).toBe(rfc3339(clock.now()));
    expect(await events('SawCompletedJob')).toEqual([
      `Saw completed job: ${first.metadata?.name}, condition: Complete`,
    ]);
    await pass(60);
    expect(await jobs()).toHaveLength(2);
    expect(await events('SuccessfulCreate')).toHaveLength(2);
  });

  it('after sleeping through ten schedule times, starts one Job, for the latest, and says so', async () => {
    await create();
    await sleep(10 * 60 + 1);
    const started = await jobs();
    expect(started).toHaveLength(1);
    const latest = Math.floor(clock.now() / 60_000) * 60_000;
    expect(started[0].metadata?.name).toBe(`backup-${latest / 60_000}`);
    const [missed] = await events('MissedSchedules');
    expect(missed).toMatch(
      /^Missed 1\d scheduled times while the control plane was not running; starting one job/,
    );
    // And the next minute is on schedule again.
    await pass(60);
    expect(await jobs()).toHaveLength(2);
  });

  it('startingDeadlineSeconds: a start missed by more than the deadline is skipped, with an event', async () => {
    await create({ startingDeadlineSeconds: 10, schedule: '*/5 * * * *' });
    // Sleep past a schedule time and wake more than 10 s after it.
    const toNext = 5 * 60_000 - (clock.now() % (5 * 60_000));
    await sleep(toNext / 1000 + 30);
    expect(await jobs()).toHaveLength(0);
    await pass(5 * 60);
    expect(await jobs()).toHaveLength(1);
  });

  it('Forbid skips a run while one is active; Replace stops it for the new one', async () => {
    await create({ concurrencyPolicy: 'Forbid' });
    await pass(60);
    expect(await jobs()).toHaveLength(1);
    await pass(60);
    expect(await jobs()).toHaveLength(1);
    expect(await events('JobAlreadyActive')).toEqual([
      'Not starting job because prior execution is running and concurrency policy is Forbid',
    ]);
    await c.patch('CronJob', 'backup', { spec: { concurrencyPolicy: 'Replace' } }, { namespace: 'default' });
    const before = (await jobs())[0].metadata?.name;
    await pass(60);
    const after = await jobs();
    expect(after).toHaveLength(1);
    expect(after[0].metadata?.name).not.toBe(before);
    expect((await get()).status?.active?.map((r) => r.name)).toEqual([after[0].metadata?.name]);
  });

  it('a suspended CronJob starts nothing', async () => {
    await create({ suspend: true });
    await pass(130);
    expect(await jobs()).toHaveLength(0);
  });

  it('keeps successfulJobsHistoryLimit and failedJobsHistoryLimit finished Jobs', async () => {
    await create({ successfulJobsHistoryLimit: 1, failedJobsHistoryLimit: 1 });
    for (const outcome of ['Complete', 'Failed', 'Complete', 'Failed'] as const) {
      await pass(60);
      const running = (await jobs()).find((j) => !j.status?.conditions?.length)!;
      await finish(running, outcome);
    }
    await settle();
    const left = await jobs();
    expect(left.map((j) => j.status?.conditions?.[0]?.type).sort()).toEqual(['Complete', 'Failed']);
  });
});

/** The Job controller's decisions as a table: what to create or delete, and when the Job is done. */
import { describe, expect, it } from 'vitest';
import type { Job, Pod } from '../../../client/api/types.js';
import { backoffDelay, nextBackoff, planJob } from '../../../main/controllers/job/plan.js';
import { formatIndexes, parseIndexes } from '../../../main/controllers/job/indexes.js';

const NOW = Date.parse('2026-06-01T12:00:00Z');
let seq = 0;

function pod(
  phase: string,
  opts: { index?: number; tracked?: boolean; restarts?: number; deleting?: boolean } = {},
): Pod {
  seq++;
  return {
    metadata: {
      name: `p${seq}`,
      uid: `uid-${seq}`,
      creationTimestamp: new Date(NOW - seq * 1000).toISOString(),
      finalizers: opts.tracked === false ? [] : ['batch.kubernetes.io/job-tracking'],
      ...(opts.index !== undefined
        ? { annotations: { 'batch.kubernetes.io/job-completion-index': String(opts.index) } }
        : {}),
      ...(opts.deleting ? { deletionTimestamp: new Date(NOW).toISOString() } : {}),
    },
    spec: { nodeName: 'n' },
    status: { phase, containerStatuses: [{ name: 'c', restartCount: opts.restarts ?? 0 }] },
  };
}

function job(spec: Partial<NonNullable<Job['spec']>>, status: Job['status'] = {}): Job {
  return {
    metadata: { name: 'j', namespace: 'default' },
    spec: { parallelism: 1, backoffLimit: 6, template: { spec: { restartPolicy: 'Never' } }, ...spec },
    status: { startTime: new Date(NOW - 60_000).toISOString(), ...status },
  };
}

describe('planJob', () => {
  it.each([
    ['starts parallelism pods', { completions: 5, parallelism: 3 }, [], {}, 3, 0],
    [
      'no more than completions left',
      { completions: 5, parallelism: 3 },
      ['Running'],
      { succeeded: 3 },
      1,
      0,
    ],
    [
      'too many running: deletes the extra',
      { completions: 5, parallelism: 1 },
      ['Running', 'Pending'],
      {},
      0,
      1,
    ],
    ['work queue: none new once one succeeded', { parallelism: 3 }, ['Running', 'Succeeded'], {}, 0, 0],
    ['work queue: parallelism before any success', { parallelism: 3 }, [], {}, 3, 0],
  ])('%s', (_why, spec, phases, status, creates, deletes) => {
    const plan = planJob(
      job(spec, status),
      phases.map((p) => pod(p)),
      NOW,
      undefined,
    );
    expect(plan.create.length).toBe(creates);
    expect(plan.delete.length).toBe(deletes);
    expect(plan.finish).toBeUndefined();
  });

  it.each([
    [
      'completions reached',
      { completions: 2 },
      ['Succeeded', 'Succeeded'],
      {},
      'Complete',
      'CompletionsReached',
    ],
    [
      'work queue: a success and nothing running',
      { parallelism: 2 },
      ['Succeeded'],
      {},
      'Complete',
      'CompletionsReached',
    ],
    [
      'failures past backoffLimit',
      { completions: 3, backoffLimit: 1 },
      ['Failed'],
      { failed: 1 },
      'Failed',
      'BackoffLimitExceeded',
    ],
    [
      'container restarts reach backoffLimit (OnFailure)',
      { backoffLimit: 2, template: { spec: { restartPolicy: 'OnFailure' } } },
      [['Running', 2]],
      {},
      'Failed',
      'BackoffLimitExceeded',
    ],
    [
      'past activeDeadlineSeconds',
      { activeDeadlineSeconds: 60 },
      ['Running'],
      {},
      'Failed',
      'DeadlineExceeded',
    ],
  ])('finishes: %s', (_why, spec, phases, status, type, reason) => {
    const pods = phases.map((p) =>
      Array.isArray(p) ? pod(p[0] as string, { restarts: p[1] as number }) : pod(p),
    );
    const plan = planJob(job(spec as Partial<NonNullable<Job['spec']>>, status), pods, NOW, undefined);
    expect(plan.finish).toMatchObject({ type, reason });
    expect(plan.create).toEqual([]);
  });

  it('records a finished pod once: not when already in uncountedTerminatedPods, not without the finalizer', () => {
    const recorded = pod('Succeeded');
    const counted = pod('Failed', { tracked: false });
    const fresh = pod('Failed');
    const deleting = pod('Running', { deleting: true });
    const plan = planJob(
      job({ completions: 5 }, { uncountedTerminatedPods: { succeeded: [recorded.metadata!.uid!] } }),
      [recorded, counted, fresh, deleting],
      NOW,
      undefined,
    );
    expect(plan.newlySucceeded).toEqual([]);
    expect(plan.newlyFailed).toEqual([fresh, deleting]);
  });

  it('Indexed: creates the missing indexes, not those done or running, and deletes duplicates', () => {
    const spec = { completionMode: 'Indexed', completions: 5, parallelism: 4 };
    const pods = [pod('Running', { index: 0 }), pod('Running', { index: 0 }), pod('Running', { index: 3 })];
    const plan = planJob(job(spec, { completedIndexes: '1' }), pods, NOW, undefined);
    expect(plan.create).toEqual([2, 4]);
    expect(plan.delete).toHaveLength(1);
  });

  it('waits out the backoff before a new pod: 10 s doubling to 6 min', () => {
    expect([1, 2, 3, 10].map(backoffDelay)).toEqual([10_000, 20_000, 40_000, 360_000]);
    const b = nextBackoff(undefined, 0, 2, NOW - 5_000);
    const plan = planJob(job({ completions: 3 }), [], NOW, b);
    expect(plan.create).toEqual([]);
    expect(plan.retryAfterMs).toBe(15_000);
    expect(nextBackoff(b, 1, 0, NOW)).toBeUndefined();
  });

  it('completedIndexes as ranges', () => {
    expect(formatIndexes([5, 0, 1, 2, 7, 8])).toBe('0-2,5,7-8');
    expect([...parseIndexes('0-2,5,x,7-9', 9)].sort()).toEqual([0, 1, 2, 5, 7, 8]);
  });
});

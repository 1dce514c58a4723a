/**
 * A Job as `kubectl get jobs` sees it, for the GUI: its status from its conditions, its
 * completions, how long it ran, and a word on its pods.
 */
import type { Job, JobCondition } from '../../../client/api/types.js';
import { humanDuration } from '../../../client/print/age.js';

export type JobState = 'Running' | 'Complete' | 'Failed' | 'Suspended' | 'Terminating';

const holds = (job: Job, type: string): JobCondition | undefined =>
  job.status?.conditions?.find((c) => c.type === type && c.status === 'True');

/** kubectl's STATUS: Complete or Failed once finished, Terminating while deleted, Suspended, else Running. */
export function jobState(job: Job): JobState {
  if (holds(job, 'Complete')) return 'Complete';
  if (holds(job, 'Failed')) return 'Failed';
  if (job.metadata?.deletionTimestamp) return 'Terminating';
  if (holds(job, 'Suspended')) return 'Suspended';
  return 'Running';
}

/** The colour a state is shown in. */
export function stateHealth(state: JobState): 'good' | 'bad' | 'warn' | undefined {
  if (state === 'Complete') return 'good';
  if (state === 'Failed') return 'bad';
  if (state === 'Suspended' || state === 'Terminating') return 'warn';
  return undefined;
}

/** Why it failed (BackoffLimitExceeded, DeadlineExceeded…), with the controller's message. */
export function failure(job: Job): { reason?: string; message?: string } | undefined {
  const c = holds(job, 'Failed');
  return c ? { reason: c.reason, message: c.message } : undefined;
}

/** COMPLETIONS as kubectl prints it: "1/3", or "0/1 of 4" for a work queue run 4 at a time. */
export function completionsText(job: Job): string {
  const succeeded = job.status?.succeeded ?? 0;
  const spec = job.spec ?? {};
  if (spec.completions !== undefined) return `${succeeded}/${spec.completions}`;
  return (spec.parallelism ?? 1) > 1 ? `${succeeded}/1 of ${spec.parallelism}` : `${succeeded}/1`;
}

/**
 * How long the Job ran, in milliseconds: from its start to its completion — or, for a failed
 * Job (which Kubernetes gives no completionTime), to its failure; still counting while it
 * runs; undefined before it started.
 */
export function durationMs(job: Job, now: number): number | undefined {
  const start = Date.parse(job.status?.startTime ?? '');
  if (Number.isNaN(start)) return undefined;
  const ended = job.status?.completionTime ?? holds(job, 'Failed')?.lastTransitionTime;
  const end = ended ? Date.parse(ended) : NaN;
  return Math.max(0, (Number.isNaN(end) ? now : end) - start);
}

/** DURATION as kubectl prints it ("45s", "5m10s"), or "—" before the Job started. */
export function durationText(job: Job, now: number): string {
  const ms = durationMs(job, now);
  return ms === undefined ? '—' : humanDuration(ms);
}

/** Its pods in a few words: "1 active", "3 succeeded, 1 failed", "no pods". */
export function podSummary(job: Job): string {
  const s = job.status ?? {};
  const parts = [
    [s.active ?? 0, 'active'],
    [s.succeeded ?? 0, 'succeeded'],
    [s.failed ?? 0, 'failed'],
  ]
    .filter(([n]) => (n as number) > 0)
    .map(([n, what]) => `${n} ${what}`);
  return parts.length ? parts.join(', ') : 'no pods';
}

/** The CronJob that made this Job, if one did (its controller owner). */
export function cronJobOwner(job: Job): string | undefined {
  return job.metadata?.ownerReferences?.find((o) => o.controller && o.kind === 'CronJob')?.name;
}

/** The merge patch that suspends a Job (its pods are stopped) or resumes it. */
export function suspendJobPatch(suspend: boolean): object {
  return { spec: { suspend } };
}

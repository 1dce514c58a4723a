/**
 * A Job's decisions (syncJob's pure part): which finished pods to record, whether the Job is
 * done — Complete when enough pods succeeded, Failed past backoffLimit (BackoffLimitExceeded)
 * or activeDeadlineSeconds (DeadlineExceeded) — and otherwise which pods to create (a count,
 * or the indexes of an Indexed Job) and which to delete, with failed pods' exponential backoff
 * (10 s doubling to 6 min) before new ones.
 */
import { isPodReady } from '../../../client/api/pods.js';
import type { Job, Pod } from '../../../client/api/types.js';
import { isPodActive } from '../common/availability.js';
import { podsToDelete } from '../common/ranking.js';
import { completionIndexOf, parseIndexes } from './indexes.js';

export const JOB_TRACKING_FINALIZER = 'batch.kubernetes.io/job-tracking';
export const BACKOFF_BASE_MS = 10_000;
export const BACKOFF_MAX_MS = 6 * 60_000;

export interface FailureBackoff {
  /** Failed pods since the last success. */
  failures: number;
  /** When the last of them was seen failing. */
  lastFailure: number;
}

export interface Finish {
  type: 'Complete' | 'Failed';
  reason: string;
  message: string;
}

export interface JobPlan {
  /** Finished pods still carrying the tracking finalizer and not yet recorded in uncountedTerminatedPods. */
  newlySucceeded: Pod[];
  newlyFailed: Pod[];
  finish?: Finish;
  /** Pods to delete (the Job finished or is suspended, or too many run). */
  delete: Pod[];
  /** How many pods to create (NonIndexed), or which indexes (Indexed). */
  create: number[];
  /** Look again after this long: a backoff or a deadline to wait out. */
  retryAfterMs?: number;
  active: number;
  ready: number;
}

export const isFinishedJob = (job: Job) =>
  !!job.status?.conditions?.some(
    (c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True',
  );

const hasTracking = (p: Pod) => !!p.metadata?.finalizers?.includes(JOB_TRACKING_FINALIZER);

/** Finished for the Job's count: terminal, or being deleted (then failed unless it succeeded). */
export function finishedPhase(p: Pod): 'succeeded' | 'failed' | undefined {
  if (p.status?.phase === 'Succeeded') return 'succeeded';
  if (p.status?.phase === 'Failed' || p.metadata?.deletionTimestamp) return 'failed';
  return undefined;
}

/** The wait before the next pod after `failures` failures in a row. */
export function backoffDelay(failures: number): number {
  if (failures <= 0) return 0;
  return Math.min(BACKOFF_BASE_MS * 2 ** Math.min(failures - 1, 20), BACKOFF_MAX_MS);
}

/** Finished pods still carrying the tracking finalizer and not yet recorded in uncountedTerminatedPods. */
export function newlyFinished(job: Job, pods: Pod[]): { newlySucceeded: Pod[]; newlyFailed: Pod[] } {
  const uncounted = job.status?.uncountedTerminatedPods ?? {};
  const recorded = new Set([...(uncounted.succeeded ?? []), ...(uncounted.failed ?? [])]);
  const newlySucceeded: Pod[] = [];
  const newlyFailed: Pod[] = [];
  for (const p of pods) {
    if (!hasTracking(p) || recorded.has(p.metadata?.uid ?? '')) continue;
    const phase = finishedPhase(p);
    if (phase === 'succeeded') newlySucceeded.push(p);
    else if (phase === 'failed') newlyFailed.push(p);
  }
  return { newlySucceeded, newlyFailed };
}

/** The backoff after this sync's news: a success starts it over, each failure lengthens it. */
export function nextBackoff(
  backoff: FailureBackoff | undefined,
  succeeded: number,
  failed: number,
  now: number,
): FailureBackoff | undefined {
  const base = succeeded > 0 ? undefined : backoff;
  if (failed === 0) return base;
  return { failures: (base?.failures ?? 0) + failed, lastFailure: now };
}

/** `backoff` must already include this sync's failures (nextBackoff). */
export function planJob(job: Job, pods: Pod[], now: number, backoff: FailureBackoff | undefined): JobPlan {
  const spec = job.spec ?? {};
  const status = job.status ?? {};
  const uncounted = status.uncountedTerminatedPods ?? {};
  const { newlySucceeded, newlyFailed } = newlyFinished(job, pods);
  const active = pods.filter(isPodActive);
  const plan: JobPlan = {
    newlySucceeded,
    newlyFailed,
    delete: [],
    create: [],
    active: active.length,
    ready: active.filter(isPodReady).length,
  };
  const succeeded = (status.succeeded ?? 0) + (uncounted.succeeded?.length ?? 0) + newlySucceeded.length;
  const failed = (status.failed ?? 0) + (uncounted.failed?.length ?? 0) + newlyFailed.length;
  const indexed = spec.completionMode === 'Indexed';
  const completions = spec.completions;
  const succeededIndexes = indexed ? succeededIndexSet(job, pods, newlySucceeded) : new Set<number>();

  // Done? Failures first, as Kubernetes checks them.
  const restarts =
    spec.template?.spec?.restartPolicy === 'OnFailure'
      ? active.reduce(
          (n, p) => n + (p.status?.containerStatuses ?? []).reduce((m, s) => m + (s.restartCount ?? 0), 0),
          0,
        )
      : 0;
  const backoffLimit = spec.backoffLimit ?? 6;
  const start = status.startTime ? Date.parse(status.startTime) : NaN;
  const deadlineAt =
    spec.activeDeadlineSeconds !== undefined && Number.isFinite(start)
      ? start + spec.activeDeadlineSeconds * 1000
      : undefined;
  if (failed > backoffLimit || (restarts > 0 && restarts >= backoffLimit)) {
    plan.finish = {
      type: 'Failed',
      reason: 'BackoffLimitExceeded',
      message: 'Job has reached the specified backoff limit',
    };
  } else if (deadlineAt !== undefined && now >= deadlineAt && !spec.suspend) {
    plan.finish = {
      type: 'Failed',
      reason: 'DeadlineExceeded',
      message: 'Job was active longer than specified deadline',
    };
  } else if (
    indexed
      ? succeededIndexes.size >= (completions ?? 0)
      : completions !== undefined
        ? succeeded >= completions
        : succeeded > 0 && active.length === 0
  ) {
    plan.finish = {
      type: 'Complete',
      reason: 'CompletionsReached',
      message: 'Reached expected number of succeeded pods',
    };
  }
  if (plan.finish || spec.suspend) {
    plan.delete = active;
    return plan;
  }
  if (deadlineAt !== undefined) plan.retryAfterMs = Math.max(0, deadlineAt - now);

  const parallelism = spec.parallelism ?? 1;
  if (indexed) {
    const activeByIndex = new Map<number, Pod[]>();
    for (const p of active) {
      const i = completionIndexOf(p);
      // A pod without a valid index, or for an index already done, is not needed.
      if (i === undefined || i >= (completions ?? 0) || succeededIndexes.has(i)) plan.delete.push(p);
      else activeByIndex.set(i, [...(activeByIndex.get(i) ?? []), p]);
    }
    for (const list of activeByIndex.values())
      plan.delete.push(...podsToDelete(list, list, list.length - 1, now));
    const running = activeByIndex.size;
    const wanted: number[] = [];
    for (let i = 0; i < (completions ?? 0) && running + wanted.length < parallelism; i++)
      if (!succeededIndexes.has(i) && !activeByIndex.has(i)) wanted.push(i);
    plan.create = wanted;
  } else {
    let wantActive: number;
    if (completions === undefined) wantActive = succeeded > 0 ? active.length : parallelism;
    else wantActive = Math.max(0, Math.min(parallelism, completions - succeeded));
    if (active.length > wantActive)
      plan.delete = podsToDelete(active, active, active.length - wantActive, now);
    else plan.create = Array.from({ length: wantActive - active.length }, (_, i) => i);
  }
  // After failures, new pods wait out the backoff.
  if (plan.create.length && backoff && backoff.failures > 0) {
    const wait = backoff.lastFailure + backoffDelay(backoff.failures) - now;
    if (wait > 0) {
      plan.create = [];
      plan.retryAfterMs = Math.min(plan.retryAfterMs ?? Infinity, wait);
    }
  }
  return plan;
}

/** The indexes succeeded: recorded in status, and those of pods that succeeded since. */
function succeededIndexSet(job: Job, pods: Pod[], newlySucceeded: Pod[]): Set<number> {
  const completions = job.spec?.completions ?? 0;
  const set = parseIndexes(job.status?.completedIndexes, completions);
  const uncounted = new Set(job.status?.uncountedTerminatedPods?.succeeded ?? []);
  for (const p of pods) {
    if (!newlySucceeded.includes(p) && !uncounted.has(p.metadata?.uid ?? '')) continue;
    const i = completionIndexOf(p);
    if (i !== undefined && i < completions) set.add(i);
  }
  return set;
}

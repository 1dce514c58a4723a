/**
 * A CronJob in the GUI: "Run now" — a Job from its jobTemplate, made as `kubectl create job
 * --from=cronjob/NAME` makes it (labctl's createJobFrom): the template's labels and
 * annotations, cronjob.kubernetes.io/instantiate=manual, the CronJob as its controller owner
 * — suspend and resume, and the history of its Jobs.
 */
import type { CronJob, Job } from '../../../client/api/types.js';
import { durationText, jobState, stateHealth, type JobState } from '../job/status.js';

export const INSTANTIATE_ANNOTATION = 'cronjob.kubernetes.io/instantiate';
/** The longest name an object can have (and a label value, which a Job's name becomes). */
export const MAX_NAME = 63;

/**
 * `<cronjob>-manual-<unix seconds>`, at most 63 characters. When that is too long, the
 * CronJob's part is shortened rather than the seconds cut off, so each run still gets a name
 * of its own; what is left of it never ends in "-" or ".", which a name may not hold there.
 */
export function manualJobName(cronJob: string, nowMs: number): string {
  const suffix = `-manual-${Math.floor(nowMs / 1000)}`;
  const base = cronJob.slice(0, Math.max(0, MAX_NAME - suffix.length)).replace(/[-.]+$/, '');
  return `${base}${suffix}`;
}

/** The Job "Run now" creates. */
export function runNowJob(cj: CronJob, nowMs: number): Job {
  const template = cj.spec?.jobTemplate ?? {};
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: manualJobName(cj.metadata?.name ?? '', nowMs),
      namespace: cj.metadata?.namespace,
      labels: { ...template.metadata?.labels },
      annotations: { ...template.metadata?.annotations, [INSTANTIATE_ANNOTATION]: 'manual' },
      ownerReferences: [
        {
          apiVersion: 'batch/v1',
          kind: 'CronJob',
          name: cj.metadata?.name,
          uid: cj.metadata?.uid,
          controller: true,
        },
      ],
    },
    spec: structuredClone(template.spec ?? {}),
  };
}

/** The merge patch that suspends a CronJob (it starts no Jobs) or resumes it. */
export function suspendPatch(suspend: boolean): object {
  return { spec: { suspend } };
}

/** The schedule's time zone in words. */
export function timeZoneText(cj: CronJob): string {
  return cj.spec?.timeZone || "the control plane's";
}

export interface HistoryEntry {
  job: Job;
  name: string;
  state: JobState;
  health: ReturnType<typeof stateHealth>;
  /** When it started (or was made, before it started). */
  started?: string;
  duration: string;
  /** Run from "Run now" (or kubectl create job --from), not by the schedule. */
  manual: boolean;
}

const newestFirst = (a: Job, b: Job): number =>
  (b.metadata?.creationTimestamp ?? '').localeCompare(a.metadata?.creationTimestamp ?? '') ||
  (b.status?.startTime ?? '').localeCompare(a.status?.startTime ?? '') ||
  (b.metadata?.name ?? '').localeCompare(a.metadata?.name ?? '');

/** The Jobs the CronJob controls, newest first, each with its outcome and how long it ran. */
export function historyOf(cj: CronJob, jobs: Iterable<Job>, now: number): HistoryEntry[] {
  const uid = cj.metadata?.uid;
  const namespace = cj.metadata?.namespace;
  const own: Job[] = [];
  for (const job of jobs) {
    if (!uid || job.metadata?.namespace !== namespace) continue;
    if (job.metadata?.ownerReferences?.some((o) => o.controller && o.uid === uid)) own.push(job);
  }
  return own.sort(newestFirst).map((job) => {
    const state = jobState(job);
    return {
      job,
      name: job.metadata?.name ?? '',
      state,
      health: stateHealth(state),
      started: job.status?.startTime ?? job.metadata?.creationTimestamp,
      duration: durationText(job, now),
      manual: job.metadata?.annotations?.[INSTANTIATE_ANNOTATION] === 'manual',
    };
  });
}

/**
 * When a CronJob should start a Job (Kubernetes' mostRecentScheduleTime and
 * nextScheduleTimeDuration): the most recent schedule time not yet acted on, counting from the
 * last schedule time (or creation) and no earlier than startingDeadlineSeconds ago — so a
 * control plane that slept through several times starts one Job, for the latest, never a burst.
 */
import type { Schedule } from '../../../client/api/cron.js';
import type { CronJob } from '../../../client/api/types.js';

/** How late after a schedule time the controller looks again (Kubernetes' nextScheduleDelta). */
export const NEXT_SCHEDULE_DELTA_MS = 100;

export interface Due {
  /** The schedule time to start a Job for, if one is due. */
  scheduled?: number;
  /** How many schedule times passed unmet (1: just this one; more: the control plane was away). */
  missed: number;
  /** Where counting started: the last schedule time, creation, or the starting deadline. */
  earliest: number;
}

export function dueSchedule(cj: CronJob, schedule: Schedule, now: number): Due {
  let earliest = Date.parse(cj.status?.lastScheduleTime ?? cj.metadata?.creationTimestamp ?? '');
  if (!Number.isFinite(earliest)) earliest = now;
  const deadline = cj.spec?.startingDeadlineSeconds;
  if (deadline !== undefined) earliest = Math.max(earliest, now - deadline * 1000);
  const t1 = schedule.next(earliest);
  if (now < t1) return { missed: 0, earliest };
  const t2 = schedule.next(t1);
  if (now < t2) return { scheduled: t1, missed: 1, earliest };
  // Several missed: only the most recent one runs.
  const latest = schedule.lastAtOrBefore(now, earliest) ?? t1;
  let missed = 2;
  for (let t = t2; missed < 100; missed++) {
    t = schedule.next(t);
    if (t > now) break;
  }
  return { scheduled: latest, missed, earliest };
}

/** Milliseconds until the next schedule time after `now`, plus the delta. */
export function nextWakeMs(schedule: Schedule, now: number): number {
  return schedule.next(now) - now + NEXT_SCHEDULE_DELTA_MS;
}

/** The Job's name for a schedule time: NAME-<minutes since the epoch> (getJobName). */
export function jobNameFor(cj: CronJob, scheduled: number): string {
  return `${cj.metadata!.name}-${Math.floor(scheduled / 60_000)}`;
}

/**
 * A CronJob's Jobs: the one it makes for a schedule time (getJobFromTemplate2), when one is
 * finished or succeeded, and which finished ones go past the history limits.
 */
import type { CronJob, Job } from '../../../client/api/types.js';
import { rfc3339 } from '../../../client/util/clock.js';
import { clone } from '../../../client/util/objects.js';
import { ownerRefFor } from '../common/claim.js';

export const SCHEDULED_TIMESTAMP_ANNOTATION = 'batch.kubernetes.io/cronjob-scheduled-timestamp';

const holds = (job: Job, type: string) =>
  !!job.status?.conditions?.some((c) => c.type === type && c.status === 'True');

export const isJobFinished = (job: Job) => holds(job, 'Complete') || holds(job, 'Failed');
export const jobSucceeded = (job: Job) => holds(job, 'Complete');

export function jobFromTemplate(cj: CronJob, name: string, scheduled: number): Job {
  const template = clone(cj.spec?.jobTemplate ?? {});
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name,
      namespace: cj.metadata!.namespace,
      labels: { ...template.metadata?.labels },
      annotations: {
        ...template.metadata?.annotations,
        [SCHEDULED_TIMESTAMP_ANNOTATION]: rfc3339(scheduled),
      },
      ownerReferences: [ownerRefFor(cj, 'CronJob')],
    },
    spec: template.spec ?? {},
  };
}

/** Finished Jobs beyond successfulJobsHistoryLimit and failedJobsHistoryLimit, oldest first. */
export function historyToDelete(cj: CronJob, jobs: Job[]): Job[] {
  const started = (j: Job) => Date.parse(j.status?.startTime ?? j.metadata?.creationTimestamp ?? '') || 0;
  const pick = (list: Job[], limit: number | undefined) => {
    if (limit === undefined) return [];
    const sorted = [...list].sort((a, b) => started(a) - started(b));
    return sorted.slice(0, Math.max(0, sorted.length - limit));
  };
  const alive = jobs.filter((j) => !j.metadata?.deletionTimestamp);
  return [
    ...pick(alive.filter(jobSucceeded), cj.spec?.successfulJobsHistoryLimit),
    ...pick(
      alive.filter((j) => holds(j, 'Failed')),
      cj.spec?.failedJobsHistoryLimit,
    ),
  ];
}

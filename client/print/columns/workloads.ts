/**
 * ReplicaSets (NAME DESIRED CURRENT READY AGE), Deployments (NAME READY UP-TO-DATE AVAILABLE
 * AGE), Jobs (NAME STATUS COMPLETIONS DURATION AGE) and CronJobs (NAME SCHEDULE TIMEZONE
 * SUSPEND ACTIVE LAST SCHEDULE AGE), as kubectl's printers; wide adds CONTAINERS IMAGES
 * SELECTOR.
 */
import type { CronJob, Deployment, Job, PodTemplateSpec, ReplicaSet } from '../../api/types.js';
import type { LabelSelector } from '../../../proto/gen/kubelab/v1/meta.js';
import { ageOf, humanDuration } from '../age.js';
import { selectorText } from './daemonset.js';
import { appendedHeaders, orNone, type KindColumns } from './types.js';

const WIDE = ['CONTAINERS', 'IMAGES', 'SELECTOR'];

function wideCells(template: PodTemplateSpec | undefined, selector: LabelSelector | undefined): string[] {
  const containers = template?.spec?.containers ?? [];
  return [
    containers.map((c) => c.name ?? '').join(','),
    containers.map((c) => c.image || '<none>').join(','),
    orNone(selectorText(selector)),
  ];
}

export const replicaSetColumns: KindColumns<ReplicaSet> = {
  headers: appendedHeaders(['NAME', 'DESIRED', 'CURRENT', 'READY', 'AGE'], WIDE),
  cells(rs, now, wide) {
    const cells = [
      rs.metadata?.name ?? '',
      String(rs.spec?.replicas ?? 0),
      String(rs.status?.replicas ?? 0),
      String(rs.status?.readyReplicas ?? 0),
      ageOf(rs.metadata?.creationTimestamp, now),
    ];
    return wide ? [...cells, ...wideCells(rs.spec?.template, rs.spec?.selector)] : cells;
  },
};

export const deploymentColumns: KindColumns<Deployment> = {
  headers: appendedHeaders(['NAME', 'READY', 'UP-TO-DATE', 'AVAILABLE', 'AGE'], WIDE),
  cells(d, now, wide) {
    const s = d.status ?? {};
    const cells = [
      d.metadata?.name ?? '',
      `${s.readyReplicas ?? 0}/${d.spec?.replicas ?? 0}`,
      String(s.updatedReplicas ?? 0),
      String(s.availableReplicas ?? 0),
      ageOf(d.metadata?.creationTimestamp, now),
    ];
    return wide ? [...cells, ...wideCells(d.spec?.template, d.spec?.selector)] : cells;
  },
};

/** kubectl's Job STATUS: the first finished-or-paused condition that holds, else Running. */
export function jobStatus(job: Job): string {
  const holds = (type: string) => job.status?.conditions?.some((c) => c.type === type && c.status === 'True');
  for (const type of ['Complete', 'Failed', 'Suspended', 'FailureTarget', 'SuccessCriteriaMet'])
    if (holds(type)) return type;
  return 'Running';
}

export const jobColumns: KindColumns<Job> = {
  headers: appendedHeaders(['NAME', 'STATUS', 'COMPLETIONS', 'DURATION', 'AGE'], WIDE),
  cells(job, now, wide) {
    const s = job.status ?? {};
    const spec = job.spec ?? {};
    const completions =
      spec.completions !== undefined
        ? `${s.succeeded ?? 0}/${spec.completions}`
        : (spec.parallelism ?? 1) > 1
          ? `${s.succeeded ?? 0}/1 of ${spec.parallelism}`
          : `${s.succeeded ?? 0}/1`;
    const start = s.startTime ? Date.parse(s.startTime) : NaN;
    const end = s.completionTime ? Date.parse(s.completionTime) : now;
    const cells = [
      job.metadata?.name ?? '',
      jobStatus(job),
      completions,
      Number.isFinite(start) ? humanDuration(end - start) : '',
      ageOf(job.metadata?.creationTimestamp, now),
    ];
    return wide ? [...cells, ...wideCells(spec.template, spec.selector)] : cells;
  },
};

export const cronJobColumns: KindColumns<CronJob> = {
  headers: appendedHeaders(
    ['NAME', 'SCHEDULE', 'TIMEZONE', 'SUSPEND', 'ACTIVE', 'LAST SCHEDULE', 'AGE'],
    WIDE,
  ),
  cells(cj, now, wide) {
    const spec = cj.spec ?? {};
    const cells = [
      cj.metadata?.name ?? '',
      spec.schedule ?? '',
      spec.timeZone ?? '<none>',
      spec.suspend ? 'True' : 'False',
      String(cj.status?.active?.length ?? 0),
      cj.status?.lastScheduleTime ? ageOf(cj.status.lastScheduleTime, now) : '<none>',
      ageOf(cj.metadata?.creationTimestamp, now),
    ];
    const jobSpec = spec.jobTemplate?.spec;
    return wide ? [...cells, ...wideCells(jobSpec?.template, jobSpec?.selector)] : cells;
  },
};

/**
 * `describe deployment|replicaset|job|cronjob`, as kubectl's DeploymentDescriber,
 * ReplicaSetDescriber, JobDescriber and CronJobDescriber print them (the parts kubelab serves).
 */
import type { CronJob, Deployment, Job, Pod, ReplicaSet } from '../../client/api/types.js';
import { selectorText } from '../../client/print/columns/daemonset.js';
import { jobStatus } from '../../client/print/columns/workloads.js';
import { controlledBy, writeMeta } from './common.js';
import { writePodTemplate } from './daemonset.js';
import { describeTime, type DescribeWriter } from './writer.js';

const replicaSetText = (rs: ReplicaSet) =>
  `${rs.metadata?.name} (${rs.status?.replicas ?? 0}/${rs.spec?.replicas ?? 0} replicas created)`;

function podsStatus(pods: Pod[]): string {
  const phase = (p: string) => pods.filter((pod) => (pod.status?.phase ?? 'Pending') === p).length;
  return `${phase('Running')} Running / ${phase('Pending')} Waiting / ${phase('Succeeded')} Succeeded / ${phase('Failed')} Failed`;
}

function writeConditions(
  w: DescribeWriter,
  conditions: Array<{ type?: string; status?: string; reason?: string }> | undefined,
): void {
  if (!conditions?.length) return;
  w.line(0, 'Conditions:');
  w.table(
    1,
    ['Type', 'Status', 'Reason'],
    conditions.map((c) => [c.type ?? '', c.status ?? '', c.reason ?? '']),
  );
}

/** `old` and `current` are the Deployment's ReplicaSets other than, and the one of, its template. */
export function describeDeployment(
  w: DescribeWriter,
  d: Deployment,
  current: ReplicaSet | undefined,
  old: ReplicaSet[],
): void {
  const s = d.status ?? {};
  writeMeta(w, d, true);
  w.field(0, 'Selector', selectorText(d.spec?.selector));
  w.field(
    0,
    'Replicas',
    `${d.spec?.replicas ?? 0} desired | ${s.updatedReplicas ?? 0} updated | ${s.replicas ?? 0} total | ${s.availableReplicas ?? 0} available | ${s.unavailableReplicas ?? 0} unavailable`,
  );
  const strategy = d.spec?.strategy;
  w.field(0, 'StrategyType', strategy?.type ?? 'RollingUpdate');
  w.field(0, 'MinReadySeconds', d.spec?.minReadySeconds ?? 0);
  if (strategy?.type !== 'Recreate' && strategy?.rollingUpdate) {
    const ru = strategy.rollingUpdate;
    w.field(
      0,
      'RollingUpdateStrategy',
      `${ru.maxUnavailable ?? '25%'} max unavailable, ${ru.maxSurge ?? '25%'} max surge`,
    );
  }
  w.line(0, 'Pod Template:');
  writePodTemplate(w, 1, d.spec?.template);
  writeConditions(w, s.conditions);
  const olds = old.filter((rs) => (rs.spec?.replicas ?? 0) > 0 || (rs.status?.replicas ?? 0) > 0);
  w.field(0, 'OldReplicaSets', olds.length ? olds.map(replicaSetText).join(', ') : '<none>');
  w.field(0, 'NewReplicaSet', current ? replicaSetText(current) : '<none>');
}

export function describeReplicaSet(w: DescribeWriter, rs: ReplicaSet, pods: Pod[]): void {
  writeMeta(w, rs, true);
  w.field(0, 'Selector', selectorText(rs.spec?.selector));
  const owner = controlledBy(rs);
  if (owner) w.field(0, 'Controlled By', owner);
  w.field(0, 'Replicas', `${rs.status?.replicas ?? 0} current / ${rs.spec?.replicas ?? 0} desired`);
  w.field(0, 'Pods Status', podsStatus(pods));
  w.line(0, 'Pod Template:');
  writePodTemplate(w, 1, rs.spec?.template);
  writeConditions(w, rs.status?.conditions);
}

export function describeJob(w: DescribeWriter, job: Job): void {
  const s = job.status ?? {};
  writeMeta(w, job, true);
  w.field(0, 'Selector', selectorText(job.spec?.selector));
  const owner = controlledBy(job);
  if (owner) w.field(0, 'Controlled By', owner);
  w.field(0, 'Parallelism', job.spec?.parallelism ?? 1);
  w.field(0, 'Completions', job.spec?.completions ?? '<unset>');
  w.field(0, 'Completion Mode', job.spec?.completionMode ?? 'NonIndexed');
  w.field(0, 'Suspend', job.spec?.suspend ?? false);
  w.field(0, 'Backoff Limit', job.spec?.backoffLimit ?? 6);
  if (job.spec?.activeDeadlineSeconds !== undefined)
    w.field(0, 'Active Deadline Seconds', `${job.spec.activeDeadlineSeconds}s`);
  if (s.startTime) w.field(0, 'Start Time', describeTime(s.startTime));
  if (s.completionTime) w.field(0, 'Completed At', describeTime(s.completionTime));
  w.field(0, 'Status', jobStatus(job));
  w.field(
    0,
    'Pods Statuses',
    `${s.active ?? 0} Active (${s.ready ?? 0} Ready) / ${s.succeeded ?? 0} Succeeded / ${s.failed ?? 0} Failed`,
  );
  if (job.spec?.completionMode === 'Indexed') w.field(0, 'Completed Indexes', s.completedIndexes || '<none>');
  w.line(0, 'Pod Template:');
  writePodTemplate(w, 1, job.spec?.template);
  writeConditions(w, s.conditions);
}

export function describeCronJob(w: DescribeWriter, cj: CronJob): void {
  const spec = cj.spec ?? {};
  const s = cj.status ?? {};
  writeMeta(w, cj, true);
  w.field(0, 'Schedule', spec.schedule);
  w.field(0, 'Time Zone', spec.timeZone ?? '<unset>');
  w.field(0, 'Concurrency Policy', spec.concurrencyPolicy ?? 'Allow');
  w.field(0, 'Suspend', spec.suspend ?? false);
  w.field(0, 'Successful Job History Limit', spec.successfulJobsHistoryLimit ?? 3);
  w.field(0, 'Failed Job History Limit', spec.failedJobsHistoryLimit ?? 1);
  w.field(
    0,
    'Starting Deadline Seconds',
    spec.startingDeadlineSeconds !== undefined ? `${spec.startingDeadlineSeconds}s` : '<unset>',
  );
  const jobSpec = spec.jobTemplate?.spec ?? {};
  w.field(0, 'Parallelism', jobSpec.parallelism ?? '<unset>');
  w.field(0, 'Completions', jobSpec.completions ?? '<unset>');
  w.line(0, 'Pod Template:');
  writePodTemplate(w, 1, jobSpec.template);
  w.field(0, 'Last Schedule Time', s.lastScheduleTime ? describeTime(s.lastScheduleTime) : '<unset>');
  w.field(0, 'Active Jobs', s.active?.length ? s.active.map((r) => r.name).join(', ') : '<none>');
}

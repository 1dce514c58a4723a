/**
 * The CronJob controller (Kubernetes' pkg/controller/cronjob, v2): starts a CronJob's Jobs on
 * its schedule. syncCronJob reads the cache, reconciles the active list with the Jobs that
 * exist, starts the Job that is due (honouring suspend, startingDeadlineSeconds and
 * concurrencyPolicy Allow/Forbid/Replace), trims the finished Jobs beyond the history limits,
 * writes the status, and asks to be woken at the next schedule time.
 */
import { isAlreadyExists, isNotFound } from '../../../client/api/errors.js';
import { isTimeZone, parseSchedule } from '../../../client/api/cron.js';
import type { CronJob, CronJobStatus, Job, ObjectReference } from '../../../client/api/types.js';
import type { SharedIndexInformer } from '../../../client/cache/informer.js';
import { metaNamespaceKey, splitKey } from '../../../client/cache/keys.js';
import type { EventRecorder } from '../../../client/events/recorder.js';
import { rfc3339 } from '../../../client/util/clock.js';
import { clone, deepEqual } from '../../../client/util/objects.js';
import { controllerRef } from '../common/claim.js';
import { ownedObjectHandlers, type Owners } from '../common/ownedevents.js';
import type { ControllerContext, ControllerDefinition } from '../types.js';
import { KeyWorker, WorkerController } from '../worker.js';
import { historyToDelete, isJobFinished, jobFromTemplate, jobSucceeded } from './jobs.js';
import { dueSchedule, jobNameFor, nextWakeMs } from './schedule.js';

export class CronJobController extends WorkerController {
  protected readonly worker: KeyWorker;
  private readonly cronJobs: SharedIndexInformer<'CronJob'>;
  private readonly jobs: SharedIndexInformer<'Job'>;
  private readonly recorder: EventRecorder;

  constructor(private readonly ctx: ControllerContext) {
    super();
    this.recorder = ctx.recorder('cronjob-controller');
    this.cronJobs = ctx.informers.informerFor('CronJob');
    this.jobs = ctx.informers.informerFor('Job');
    this.worker = new KeyWorker(
      { name: 'cronjob', clock: ctx.clock, logger: ctx.logger, metrics: ctx.queueMetrics },
      (key) => this.syncCronJob(key),
    );
    this.cronJobs.addEventHandler({
      onAdd: (cj) => this.enqueue(cj),
      onUpdate: (_old, cj) => this.enqueue(cj),
    });
    // Only Jobs a CronJob controls matter; no CronJob adopts orphans.
    const owners: Owners<CronJob> = {
      kind: 'CronJob',
      get: (name, namespace) => this.cronJobs.get(name, namespace),
      list: () => [],
      selectorOf: () => undefined,
    };
    this.jobs.addEventHandler(
      ownedObjectHandlers<Job, CronJob>(owners, { enqueue: (cj) => this.enqueue(cj) }),
    );
  }

  enqueue(cj: CronJob): void {
    this.worker.enqueue(metaNamespaceKey(cj));
  }

  async syncCronJob(key: string): Promise<void> {
    const { namespace, name } = splitKey(key);
    const cached = this.cronJobs.get(name, namespace);
    if (!cached) return;
    const cj = clone(cached);
    const status: CronJobStatus = clone(cj.status ?? {});
    const jobs = this.jobs.list(namespace).filter((j) => controllerRef(j)?.uid === cj.metadata?.uid);
    await this.reconcileActive(cj, status, jobs);
    const wakeMs = await this.startDueJob(cj, status);
    await this.cleanupFinishedJobs(cj, jobs);
    if (!deepEqual(cached.status ?? {}, status)) {
      await this.ctx.client.updateStatus<CronJob>({ ...cj, status });
    }
    if (wakeMs !== undefined) this.worker.enqueueAfter(key, wakeMs);
  }

  /** The active list follows the Jobs: finished ones leave it, and so do missing ones. */
  private async reconcileActive(cj: CronJob, status: CronJobStatus, jobs: Job[]): Promise<void> {
    const active = new Map((status.active ?? []).map((r) => [r.uid, r]));
    for (const job of jobs) {
      const uid = job.metadata!.uid;
      if (!active.has(uid) && !isJobFinished(job)) {
        // Made by hand (kubectl create job --from=cronjob/…) or lost by a crash: not adopted into
        // the active list, as in Kubernetes; the job-name check keeps a lost one from running twice.
        this.recorder.event(
          cj,
          'Warning',
          'UnexpectedJob',
          `Saw a job that the controller did not create or forgot: ${job.metadata?.name}`,
        );
      } else if (active.has(uid) && isJobFinished(job)) {
        active.delete(uid);
        const done = job.status?.conditions?.find(
          (c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True',
        );
        this.recorder.event(
          cj,
          'Normal',
          'SawCompletedJob',
          `Saw completed job: ${job.metadata?.name}, condition: ${done?.type}`,
        );
      }
      if (jobSucceeded(job) && job.status?.completionTime) {
        const t = job.status.completionTime;
        if (!status.lastSuccessfulTime || Date.parse(t) > Date.parse(status.lastSuccessfulTime))
          status.lastSuccessfulTime = t;
      }
    }
    const known = new Set(jobs.map((j) => j.metadata!.uid));
    for (const [uid, ref] of active) {
      if (known.has(uid)) continue;
      try {
        const job = await this.ctx.client.get('Job', ref.name!, { namespace: ref.namespace });
        if (job.metadata?.uid === uid) continue;
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
      active.delete(uid);
      this.recorder.event(cj, 'Normal', 'MissingJob', `Active job went missing: ${ref.name}`);
    }
    status.active = [...active.values()];
  }

  /** Starts the Job that is due, if any; returns when to look again. */
  private async startDueJob(cj: CronJob, status: CronJobStatus): Promise<number | undefined> {
    if (cj.metadata?.deletionTimestamp) return undefined;
    const spec = cj.spec ?? {};
    if (spec.timeZone !== undefined && !isTimeZone(spec.timeZone)) {
      this.recorder.event(
        cj,
        'Warning',
        'UnknownTimeZone',
        `invalid timeZone: "${spec.timeZone}": unknown time zone`,
      );
      return undefined;
    }
    if (spec.suspend) return undefined;
    let schedule;
    try {
      schedule = parseSchedule(spec.schedule ?? '', spec.timeZone);
    } catch (err) {
      this.recorder.event(
        cj,
        'Warning',
        'UnparseableSchedule',
        `unparseable schedule: "${spec.schedule}" : ${(err as Error).message}`,
      );
      return undefined;
    }
    const now = this.ctx.clock.now();
    const due = dueSchedule({ ...cj, status }, schedule, now);
    const wake = nextWakeMs(schedule, now);
    if (due.scheduled === undefined) return wake;
    const scheduled = due.scheduled;
    if (spec.startingDeadlineSeconds !== undefined && scheduled + spec.startingDeadlineSeconds * 1000 < now) {
      this.recorder.event(
        cj,
        'Warning',
        'MissSchedule',
        `Missed scheduled time to start a job: ${rfc3339(scheduled)}`,
      );
      return wake;
    }
    const jobName = jobNameFor(cj, scheduled);
    if (
      status.active?.some((r) => r.name === jobName) ||
      (status.lastScheduleTime && Date.parse(status.lastScheduleTime) === scheduled)
    )
      return wake;
    if (spec.concurrencyPolicy === 'Forbid' && status.active?.length) {
      this.recorder.event(
        cj,
        'Normal',
        'JobAlreadyActive',
        'Not starting job because prior execution is running and concurrency policy is Forbid',
      );
      return wake;
    }
    if (spec.concurrencyPolicy === 'Replace') {
      for (const ref of status.active ?? []) {
        await this.ctx.client
          .delete('Job', ref.name!, {
            namespace: ref.namespace,
            propagationPolicy: 'Background',
            preconditions: { uid: ref.uid },
          })
          .catch((err) => {
            if (!isNotFound(err)) throw err;
          });
        this.recorder.event(cj, 'Normal', 'SuccessfulDelete', `Deleted job ${ref.name}`);
      }
      status.active = [];
    }
    if (due.missed > 1) {
      this.recorder.event(
        cj,
        'Normal',
        'MissedSchedules',
        `Missed ${due.missed >= 100 ? '100 or more' : due.missed} scheduled times while the control plane was not running; starting one job, for the most recent (${rfc3339(scheduled)})`,
      );
    }
    let job: Job;
    try {
      job = await this.ctx.client.create(jobFromTemplate(cj, jobName, scheduled));
    } catch (err) {
      if (isAlreadyExists(err)) return wake;
      this.recorder.event(cj, 'Warning', 'FailedCreate', `Error creating job: ${(err as Error).message}`);
      throw err;
    }
    this.recorder.event(cj, 'Normal', 'SuccessfulCreate', `Created job ${job.metadata?.name}`);
    status.active = [...(status.active ?? []), refTo(job)];
    status.lastScheduleTime = rfc3339(scheduled);
    return wake;
  }

  /** Deletes finished Jobs beyond the history limits, oldest first (cleanupFinishedJobs). */
  private async cleanupFinishedJobs(cj: CronJob, jobs: Job[]): Promise<void> {
    for (const job of historyToDelete(cj, jobs)) {
      await this.ctx.client
        .delete('Job', job.metadata!.name!, {
          namespace: job.metadata!.namespace,
          propagationPolicy: 'Background',
          preconditions: { uid: job.metadata!.uid },
        })
        .then(() =>
          this.recorder.event(cj, 'Normal', 'SuccessfulDelete', `Deleted job ${job.metadata?.name}`),
        )
        .catch((err) => {
          if (!isNotFound(err)) throw err;
        });
    }
  }
}

function refTo(job: Job): ObjectReference {
  return {
    kind: 'Job',
    namespace: job.metadata!.namespace,
    name: job.metadata!.name,
    uid: job.metadata!.uid,
    apiVersion: 'batch/v1',
    resourceVersion: job.metadata!.resourceVersion,
  };
}

export const cronJobController: ControllerDefinition = {
  name: 'cronjob',
  enabledByDefault: true,
  defaultWorkers: 5,
  create: (ctx) => new CronJobController(ctx),
};

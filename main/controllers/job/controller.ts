/**
 * The Job controller (Kubernetes' pkg/controller/job): runs a Job's pods to completion.
 * syncJob reads the cache, claims the pods its selector matches, decides with plan.ts, creates
 * and deletes pods (slow start, expectations), and keeps the status with finalizer-based
 * tracking: a finished pod is first recorded in status.uncountedTerminatedPods, then loses its
 * batch.kubernetes.io/job-tracking finalizer, then is counted — so a pod is counted exactly
 * once however the controller is interrupted, and none is lost to a deletion.
 */
import { isNotFound } from '../../../client/api/errors.js';
import type { Job, JobCondition, JobStatus, Pod } from '../../../client/api/types.js';
import type { SharedIndexInformer } from '../../../client/cache/informer.js';
import { metaNamespaceKey, splitKey } from '../../../client/cache/keys.js';
import type { EventRecorder } from '../../../client/events/recorder.js';
import { rfc3339 } from '../../../client/util/clock.js';
import { clone, deepEqual } from '../../../client/util/objects.js';
import { labelSelectorFromObject } from '../../../client/api/selectors.js';
import { claimObjects } from '../common/adoption.js';
import { controlledOrOrphans, indexByController } from '../common/candidates.js';
import { ControllerExpectations } from '../common/expectations.js';
import { ownedObjectHandlers, ownersFromInformer } from '../common/ownedevents.js';
import { podFromTemplate } from '../common/podtemplate.js';
import { slowStartBatches } from '../common/slowstart.js';
import type { ControllerContext, ControllerDefinition } from '../types.js';
import { KeyWorker, WorkerController } from '../worker.js';
import { COMPLETION_INDEX_ANNOTATION, completionIndexOf, formatIndexes, parseIndexes } from './indexes.js';
import {
  isFinishedJob,
  JOB_TRACKING_FINALIZER,
  newlyFinished,
  nextBackoff,
  planJob,
  type FailureBackoff,
  type Finish,
} from './plan.js';

/** Creates or deletes per sync at most (Kubernetes' MaxPodCreateDeletePerSync). */
export const MAX_POD_CREATE_DELETE_PER_SYNC = 500;

export class JobController extends WorkerController {
  readonly expectations: ControllerExpectations;
  protected readonly worker: KeyWorker;
  private readonly jobs: SharedIndexInformer<'Job'>;
  private readonly pods: SharedIndexInformer<'Pod'>;
  private readonly recorder: EventRecorder;
  /** Failed pods since the last success, per Job (the podBackoffStore). */
  private readonly backoffs = new Map<string, FailureBackoff>();

  constructor(private readonly ctx: ControllerContext) {
    super();
    this.expectations = new ControllerExpectations(() => ctx.clock.now());
    this.recorder = ctx.recorder('job-controller');
    this.jobs = ctx.informers.informerFor('Job');
    this.pods = ctx.informers.informerFor('Pod');
    indexByController(this.pods);
    this.worker = new KeyWorker(
      { name: 'job', clock: ctx.clock, logger: ctx.logger, metrics: ctx.queueMetrics },
      (key) => this.syncJob(key),
    );
    this.jobs.addEventHandler({
      onAdd: (job) => this.enqueue(job),
      onUpdate: (_old, job) => this.enqueue(job),
      onDelete: (job) => {
        this.expectations.deleteExpectations(metaNamespaceKey(job));
        this.backoffs.delete(metaNamespaceKey(job));
        this.enqueue(job);
      },
    });
    this.pods.addEventHandler(
      ownedObjectHandlers<Pod, Job>(ownersFromInformer('Job', this.jobs), {
        enqueue: (job) => this.enqueue(job),
        created: (job) => this.expectations.creationObserved(metaNamespaceKey(job)),
        deleted: (job, pod) => this.expectations.deletionObserved(metaNamespaceKey(job), pod.metadata?.uid),
      }),
    );
  }

  enqueue(job: Job): void {
    this.worker.enqueue(metaNamespaceKey(job));
  }

  // ---- the sync ----

  async syncJob(key: string): Promise<void> {
    const { namespace, name } = splitKey(key);
    const cached = this.jobs.get(name, namespace);
    if (!cached) {
      this.expectations.deleteExpectations(key);
      this.backoffs.delete(key);
      return;
    }
    const job = clone(cached);
    const selector = labelSelectorFromObject(job.spec?.selector ?? {}, 'spec.selector');
    const pods = await claimObjects(
      this.ctx.client,
      this.ctx.logger,
      { kind: 'Job', object: job },
      selector,
      'Pod',
      controlledOrOrphans(this.pods, job),
    );
    const now = this.ctx.clock.now();
    const news = newlyFinished(job, pods);
    const backoff = nextBackoff(
      this.backoffs.get(key),
      news.newlySucceeded.length,
      news.newlyFailed.length,
      now,
    );
    if (backoff) this.backoffs.set(key, backoff);
    else this.backoffs.delete(key);
    if (isFinishedJob(job)) {
      // Finished: only the accounting of pods that ended with it is left.
      await this.trackFinishedPods(job, pods, news);
      return;
    }
    if (!this.expectations.satisfiedExpectations(key)) {
      await this.trackFinishedPods(job, pods, news);
      return;
    }
    const status = clone(job.status ?? {});
    this.suspendOrResume(job, status, now);
    job.status = status;
    const plan = planJob(job, pods, now, backoff);

    await this.deletePods(job, plan.delete);
    if (plan.create.length) await this.createPods(job, plan.create);
    // Finished pods are counted first, so the Job is never Complete or Failed before they are.
    await this.trackFinishedPods(job, pods, plan, cached.status);
    const next = clone(job.status ?? {});
    next.active = plan.active - plan.delete.length + plan.create.length;
    next.ready = plan.ready;
    if (plan.finish) this.finish(job, next, plan.finish, now);
    job.status = await this.writeStatusIfChanged(job, cached.status, next);
    if (plan.retryAfterMs !== undefined) this.worker.enqueueAfter(key, plan.retryAfterMs);
  }

  /** Suspended: the Suspended condition and no start time; resumed: a new start time (JobSuspended/JobResumed). */
  private suspendOrResume(job: Job, status: JobStatus, now: number): void {
    const suspendedCond = status.conditions?.find((c) => c.type === 'Suspended');
    if (job.spec?.suspend) {
      if (suspendedCond?.status !== 'True') {
        setCondition(status, condition('Suspended', 'True', 'JobSuspended', 'Job suspended', now));
        this.recorder.event(job, 'Normal', 'Suspended', 'Job suspended');
      }
      delete status.startTime;
      return;
    }
    if (suspendedCond?.status === 'True') {
      setCondition(status, condition('Suspended', 'False', 'JobResumed', 'Job resumed', now));
      this.recorder.event(job, 'Normal', 'Resumed', 'Job resumed');
      status.startTime = rfc3339(now);
    }
    status.startTime ??= rfc3339(now);
  }

  private finish(job: Job, status: JobStatus, finish: Finish, now: number): void {
    setCondition(status, condition(finish.type, 'True', finish.reason, finish.message, now));
    if (finish.type === 'Complete') {
      status.completionTime = rfc3339(now);
      this.recorder.event(job, 'Normal', 'Completed', 'Job completed');
    } else {
      this.recorder.event(job, 'Warning', finish.reason, finish.message);
    }
    status.active = 0;
  }

  // ---- pods ----

  private podFor(job: Job, index: number | undefined): Pod {
    const pod = podFromTemplate(job.spec?.template, job, 'Job');
    const meta = pod.metadata!;
    meta.finalizers = [...(meta.finalizers ?? []), JOB_TRACKING_FINALIZER];
    if (index !== undefined) {
      const value = String(index);
      meta.generateName = `${job.metadata!.name}-${value}-`;
      meta.annotations = { ...meta.annotations, [COMPLETION_INDEX_ANNOTATION]: value };
      meta.labels = { ...meta.labels, [COMPLETION_INDEX_ANNOTATION]: value };
      const spec = pod.spec!;
      spec.hostname ??= `${job.metadata!.name}-${value}`;
      const env = {
        name: 'JOB_COMPLETION_INDEX',
        valueFrom: { fieldRef: { fieldPath: `metadata.annotations['${COMPLETION_INDEX_ANNOTATION}']` } },
      };
      for (const c of [...(spec.initContainers ?? []), ...(spec.containers ?? [])])
        if (!c.env?.some((e) => e.name === env.name)) c.env = [...(c.env ?? []), env];
    }
    return pod;
  }

  private async createPods(job: Job, indexes: number[]): Promise<void> {
    const key = metaNamespaceKey(job);
    const indexed = job.spec?.completionMode === 'Indexed';
    const count = Math.min(indexes.length, MAX_POD_CREATE_DELETE_PER_SYNC);
    this.expectations.setExpectations(key, count, 0);
    const result = await slowStartBatches(count, async (i) => {
      try {
        const pod = await this.ctx.client.create(this.podFor(job, indexed ? indexes[i] : undefined));
        this.recorder.event(job, 'Normal', 'SuccessfulCreate', `Created pod: ${pod.metadata?.name}`);
      } catch (err) {
        this.expectations.creationObserved(key);
        this.recorder.event(job, 'Warning', 'FailedCreate', `Error creating: ${(err as Error).message}`);
        throw err;
      }
    });
    for (let i = 0; i < result.skipped; i++) this.expectations.creationObserved(key);
    if (result.errors.length) throw result.errors[0];
  }

  private async deletePods(job: Job, pods: Pod[]): Promise<void> {
    if (!pods.length) return;
    const key = metaNamespaceKey(job);
    const victims = pods.slice(0, MAX_POD_CREATE_DELETE_PER_SYNC);
    this.expectations.expectDeletions(
      key,
      victims.map((p) => p.metadata!.uid!),
    );
    const errors: Error[] = [];
    await Promise.all(
      victims.map(async (pod) => {
        try {
          await this.ctx.client.delete('Pod', pod.metadata!.name!, {
            namespace: pod.metadata!.namespace,
            preconditions: { uid: pod.metadata!.uid },
          });
          this.recorder.event(job, 'Normal', 'SuccessfulDelete', `Deleted pod: ${pod.metadata!.name}`);
        } catch (err) {
          this.expectations.deletionObserved(key, pod.metadata!.uid);
          if (!isNotFound(err)) errors.push(err as Error);
        }
      }),
    );
    if (errors.length) throw errors[0];
  }

  // ---- finalizer-based tracking ----

  /**
   * Records newly finished pods in uncountedTerminatedPods, removes their finalizers, then counts
   * every recorded pod whose finalizer is gone (trackJobStatusAndRemoveFinalizers).
   */
  private async trackFinishedPods(
    job: Job,
    pods: Pod[],
    plan: ReturnType<typeof newlyFinished>,
    stored: JobStatus | undefined = job.status,
  ): Promise<void> {
    const status = clone(job.status ?? {});
    const uncounted = (status.uncountedTerminatedPods ??= {});
    const finished = [...plan.newlySucceeded, ...plan.newlyFailed];
    if (finished.length) {
      uncounted.succeeded = [
        ...(uncounted.succeeded ?? []),
        ...plan.newlySucceeded.map((p) => p.metadata!.uid!),
      ];
      uncounted.failed = [...(uncounted.failed ?? []), ...plan.newlyFailed.map((p) => p.metadata!.uid!)];
      job.status = await this.writeStatusIfChanged(job, stored, status);
    }
    const byUid = new Map(pods.map((p) => [p.metadata!.uid!, p]));
    const recorded = [...(uncounted.succeeded ?? []), ...(uncounted.failed ?? [])];
    await Promise.all(
      recorded.map(async (uid) => {
        const pod = byUid.get(uid);
        if (!pod?.metadata?.finalizers?.includes(JOB_TRACKING_FINALIZER)) return;
        await this.removeTrackingFinalizer(pod);
        byUid.set(uid, { ...pod, metadata: { ...pod.metadata, finalizers: [] } });
      }),
    );
    // Every recorded pod has lost its finalizer (or is gone): count them.
    const next = clone(job.status ?? {});
    const u = next.uncountedTerminatedPods ?? {};
    if (!u.succeeded?.length && !u.failed?.length) return;
    next.succeeded = (next.succeeded ?? 0) + (u.succeeded?.length ?? 0);
    next.failed = (next.failed ?? 0) + (u.failed?.length ?? 0);
    if (job.spec?.completionMode === 'Indexed') {
      const completions = job.spec.completions ?? 0;
      const indexes = parseIndexes(next.completedIndexes, completions);
      for (const uid of u.succeeded ?? []) {
        const pod = byUid.get(uid);
        const i = pod ? completionIndexOf(pod) : undefined;
        if (i !== undefined && i < completions) indexes.add(i);
      }
      next.completedIndexes = formatIndexes(indexes);
    }
    next.uncountedTerminatedPods = {};
    job.status = await this.writeStatusIfChanged(job, job.status, next);
  }

  private async removeTrackingFinalizer(pod: Pod): Promise<void> {
    try {
      await this.ctx.client.patch(
        'Pod',
        pod.metadata!.name!,
        {
          metadata: {
            resourceVersion: pod.metadata!.resourceVersion,
            finalizers: (pod.metadata?.finalizers ?? []).filter((f) => f !== JOB_TRACKING_FINALIZER),
          },
        },
        { namespace: pod.metadata!.namespace },
      );
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  private async writeStatusIfChanged(
    job: Job,
    before: JobStatus | undefined,
    status: JobStatus,
  ): Promise<JobStatus> {
    if (deepEqual(before ?? {}, status)) return status;
    const written = await this.ctx.client.updateStatus<Job>({ ...job, status });
    job.metadata = written.metadata;
    return written.status ?? {};
  }
}

function condition(
  type: string,
  status: 'True' | 'False',
  reason: string,
  message: string,
  now: number,
): JobCondition {
  const t = rfc3339(now);
  return { type, status, lastProbeTime: t, lastTransitionTime: t, reason, message };
}

/** Replaces the condition of its type, keeping the transition time when the status is unchanged. */
function setCondition(status: JobStatus, c: JobCondition): void {
  const current = status.conditions?.find((x) => x.type === c.type);
  const next =
    current && current.status === c.status ? { ...c, lastTransitionTime: current.lastTransitionTime } : c;
  status.conditions = [...(status.conditions ?? []).filter((x) => x.type !== c.type), next];
}

export const jobController: ControllerDefinition = {
  name: 'job',
  enabledByDefault: true,
  defaultWorkers: 5,
  create: (ctx) => new JobController(ctx),
};

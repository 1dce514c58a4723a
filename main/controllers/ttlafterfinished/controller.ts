/**
 * The TTL-after-finished controller (Kubernetes' pkg/controller/ttlafterfinished): deletes a
 * finished Job ttlSecondsAfterFinished after it finished — completionTime, or when its Failed
 * condition became true — with foreground propagation, so its pods go first. It checks the
 * Job afresh before deleting, so a TTL changed meanwhile is honoured.
 */
import { isNotFound } from '../../../client/api/errors.js';
import type { Job } from '../../../client/api/types.js';
import type { SharedIndexInformer } from '../../../client/cache/informer.js';
import { metaNamespaceKey, splitKey } from '../../../client/cache/keys.js';
import type { ControllerContext, ControllerDefinition } from '../types.js';
import { KeyWorker, WorkerController } from '../worker.js';

/** When the Job finished, or undefined while it runs (jobFinishTime). */
export function finishTime(job: Job): number | undefined {
  const done = job.status?.conditions?.find(
    (c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True',
  );
  if (!done) return undefined;
  const t = Date.parse(done.lastTransitionTime ?? job.status?.completionTime ?? '');
  return Number.isFinite(t) ? t : undefined;
}

/** Milliseconds until the Job expires (≤ 0: now), or undefined when it never does. */
export function timeLeft(job: Job, now: number): number | undefined {
  const ttl = job.spec?.ttlSecondsAfterFinished;
  if (ttl === undefined || job.metadata?.deletionTimestamp) return undefined;
  const finished = finishTime(job);
  return finished === undefined ? undefined : finished + ttl * 1000 - now;
}

export class TTLAfterFinishedController extends WorkerController {
  protected readonly worker: KeyWorker;
  private readonly jobs: SharedIndexInformer<'Job'>;

  constructor(private readonly ctx: ControllerContext) {
    super();
    this.jobs = ctx.informers.informerFor('Job');
    this.worker = new KeyWorker(
      { name: 'ttl_jobs_to_delete', clock: ctx.clock, logger: ctx.logger, metrics: ctx.queueMetrics },
      (key) => this.sync(key),
    );
    const consider = (job: Job) => {
      if (timeLeft(job, ctx.clock.now()) !== undefined) this.worker.enqueue(metaNamespaceKey(job));
    };
    this.jobs.addEventHandler({ onAdd: consider, onUpdate: (_o, job) => consider(job) });
  }

  async sync(key: string): Promise<void> {
    const { namespace, name } = splitKey(key);
    const cached = this.jobs.get(name, namespace);
    if (!cached) return;
    const now = this.ctx.clock.now();
    const left = timeLeft(cached, now);
    if (left === undefined) return;
    if (left > 0) return this.worker.enqueueAfter(key, left);
    // The cache may be stale: the TTL may have been raised or removed.
    let fresh: Job;
    try {
      fresh = await this.ctx.client.get('Job', name, { namespace });
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
    const freshLeft = timeLeft(fresh, now);
    if (freshLeft === undefined) return;
    if (freshLeft > 0) return this.worker.enqueueAfter(key, freshLeft);
    this.ctx.logger.info({ job: key }, 'deleting a finished Job whose ttlSecondsAfterFinished passed');
    await this.ctx.client
      .delete('Job', name, {
        namespace,
        propagationPolicy: 'Foreground',
        preconditions: { uid: fresh.metadata?.uid },
      })
      .catch((err) => {
        if (!isNotFound(err)) throw err;
      });
  }
}

export const ttlAfterFinishedController: ControllerDefinition = {
  name: 'ttl-after-finished',
  enabledByDefault: true,
  defaultWorkers: 1,
  create: (ctx) => new TTLAfterFinishedController(ctx),
};

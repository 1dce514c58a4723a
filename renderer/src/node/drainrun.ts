/**
 * Draining a node, step by step, for the node page to show: cordon it, delete each pod the
 * plan says to (a few at a time; each pod keeps its own grace period), then follow every such
 * pod until it is gone from the store — terminating pods show when their grace period ends.
 * DaemonSet pods are listed as skipped. `observe()` is called whenever the pods change.
 */
import type { Pod } from '../../../client/api/types.js';
import { BridgeRequestError, type BridgeClient } from '../bridge/client.js';
import { setUnschedulable } from './cordon.js';
import type { DrainItem } from './drainplan.js';

export type PodDrainState = 'skipped' | 'queued' | 'deleting' | 'terminating' | 'gone' | 'failed';
export type DrainPhase = 'cordoning' | 'deleting' | 'waiting' | 'done' | 'failed';

export interface PodProgress {
  item: DrainItem;
  state: PodDrainState;
  /** Why it failed, or what it waits for. */
  detail?: string;
  /** Terminating: when its grace period ends (ms since the epoch). */
  deadline?: number;
  /** Terminating: what still holds the pod once it stopped (it goes when they are removed). */
  finalizers?: string[];
}

/** Deletes in flight at once: quick on a big node, gentle on the control plane. */
const PARALLEL_DELETES = 4;

export class DrainRun {
  phase: DrainPhase = 'cordoning';
  error: string | undefined;
  readonly pods: PodProgress[];

  constructor(
    private readonly bridge: BridgeClient,
    readonly nodeName: string,
    plan: readonly DrainItem[],
    /** The pod with this key as the store has it now (undefined once deleted). */
    private readonly lookup: (key: string) => Pod | undefined,
    private readonly onUpdate: () => void = () => undefined,
  ) {
    if (plan.some((i) => i.action === 'blocked')) {
      throw new Error('the drain plan has pods it may not delete: plan again with force, or leave them be');
    }
    this.pods = plan.map((item) => ({
      item,
      state: item.action === 'skip' ? 'skipped' : item.action === 'wait' ? 'terminating' : 'queued',
    }));
  }

  /** Cordons the node, deletes the pods, and returns once every deletion was asked for. */
  async run(): Promise<void> {
    try {
      await setUnschedulable(this.bridge, this.nodeName, true);
    } catch (err) {
      this.fail(`cannot cordon ${this.nodeName}: ${(err as Error).message}`);
      return;
    }
    this.phase = 'deleting';
    this.onUpdate();
    const queue = this.pods.filter((p) => p.state === 'queued');
    const worker = async () => {
      for (let next = queue.shift(); next; next = queue.shift()) await this.delete(next);
    };
    await Promise.all(Array.from({ length: PARALLEL_DELETES }, worker));
    this.phase = 'waiting';
    this.observe();
  }

  /** Follows the pods' deletion in the store. */
  observe(): void {
    for (const p of this.pods) {
      if (p.state !== 'terminating' && p.state !== 'deleting') continue;
      const pod = this.lookup(p.item.key);
      if (!pod || pod.metadata?.uid !== p.item.uid) {
        p.state = 'gone';
        p.deadline = undefined;
        p.finalizers = undefined;
        p.detail = undefined;
      } else if (pod.metadata?.deletionTimestamp) {
        p.state = 'terminating';
        p.deadline = Date.parse(pod.metadata.deletionTimestamp);
        p.finalizers = pod.metadata.finalizers?.length ? [...pod.metadata.finalizers] : undefined;
        p.detail = p.finalizers
          ? `held by finalizer ${p.finalizers.join(', ')} until its owner lets go`
          : undefined;
      }
    }
    const pending = this.pods.some(
      (p) => p.state !== 'gone' && p.state !== 'skipped' && p.state !== 'failed',
    );
    if (this.phase === 'waiting' && !pending) {
      this.phase = this.pods.some((p) => p.state === 'failed') ? 'failed' : 'done';
      if (this.phase === 'failed') this.error = 'some pods could not be deleted: see each one’s message';
    }
    this.onUpdate();
  }

  /**
   * Deletes a pod stuck terminating at once (grace period 0): for a node whose agent is gone
   * and will not confirm the pod stopped. Its processes may still run there.
   */
  async forceDelete(progress: PodProgress): Promise<void> {
    await this.delete(progress, 0);
  }

  private async delete(progress: PodProgress, gracePeriodSeconds?: number): Promise<void> {
    const [namespace, name] = progress.item.key.split('/');
    progress.state = 'deleting';
    progress.detail = undefined;
    this.onUpdate();
    try {
      await this.bridge.request({
        op: 'delete',
        kind: 'Pod',
        name,
        options: {
          namespace,
          // This pod, not one made since under the same name.
          preconditions: { uid: progress.item.uid },
          ...(gracePeriodSeconds === undefined ? {} : { gracePeriodSeconds }),
        },
      });
      progress.state = 'terminating';
    } catch (err) {
      const gone =
        err instanceof BridgeRequestError && (err.reason === 'NotFound' || err.reason === 'Conflict');
      progress.state = gone ? 'gone' : 'failed';
      if (!gone) progress.detail = (err as Error).message;
    }
    this.observe();
  }

  private fail(message: string): void {
    this.phase = 'failed';
    this.error = message;
    this.onUpdate();
  }
}

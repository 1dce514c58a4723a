/**
 * Writing pod statuses (the kubelet's status manager): the workers say what each pod's status
 * should be; this writes it when it differs from what the API holds, one write per pod at a
 * time, the latest wins. While the control plane is away the wanted statuses wait and are
 * written when it returns (a resync every few seconds notices).
 *
 * Only the agent's own conditions are written: everyone else's (DisruptionTarget, a readiness
 * gate's condition) are taken from the API's copy at the moment of the write, so a condition
 * added between the agent's look and its write survives (the kubelet's mergePodStatus).
 *
 * A deleted pod whose containers have all stopped is finished here, as the kubelet's status
 * manager does it: its last status is written, then the pod is deleted with a zero grace
 * period. That delete is tried again, with back-off, until the API object is gone (NotFound,
 * or the name now belongs to another pod): a control plane that restarts at that moment must
 * not leave the pod Terminating for ever.
 */
import { isApiError, isConflict, isNotFound } from '../../client/api/errors.js';
import type { Pod, PodStatus } from '../../client/api/types.js';
import type { Client } from '../../client/client.js';
import type { Clock, TimerHandle } from '../../client/util/clock.js';
import { deepEqual } from '../../client/util/objects.js';
import type { ControlPlaneContact } from '../contact.js';
import type { Logger } from '../logger.js';
import { mergeStatus } from './status.js';

const isInvalid = (err: unknown) => isApiError(err, 'Invalid') || isApiError(err, 'BadRequest');

interface Wanted {
  namespace: string;
  name: string;
  uid: string;
  /** Absent: nothing to write (an agent that never ran the pod only finishes it). */
  status?: PodStatus;
  /** Deleted, and nothing of it runs any more: after its status, delete it (grace 0) until gone. */
  finished?: boolean;
  /**
   * The cached pod last found to show `status`. Cached objects are frozen and replaced on every
   * change, so while the cache hands back this same object the answer stands: the resync need
   * not merge and compare every pod's status again (at 10 pods a node, that comparison was the
   * largest part of a hollow node's CPU).
   */
  shownBy?: Pod;
}

export interface FinalDeleteBackoff {
  /** The wait after the first failed final delete (default 1 s); it doubles after each failure. */
  initialMs?: number;
  /** The longest wait between tries (default 30 s). */
  maxMs?: number;
}

export interface PodStatusManagerOptions {
  client: Client;
  clock: Clock;
  logger: Logger;
  /** The API's copy of a pod as the agent's informer holds it. */
  cached(namespace: string, name: string): Pod | undefined;
  /** How often statuses that could not be written are tried again (default 5 s). */
  resyncMs?: number;
  /** Logs outages of the control plane once: writes failing for want of it are logged at debug. */
  contact?: ControlPlaneContact;
  finalDeleteBackoff?: FinalDeleteBackoff;
}

export class PodStatusManager {
  private readonly wanted = new Map<string, Wanted>();
  private readonly writing = new Map<string, Promise<void>>();
  private readonly again = new Set<string>();
  /** Finished pods whose final delete failed: how often, and the timer of the next try. */
  private readonly retries = new Map<string, { failures: number; timer?: TimerHandle }>();
  private timer: TimerHandle | undefined;
  private stopped = false;
  /** Writes that reached the API (for tests and metrics). */
  writes = 0;

  constructor(private readonly options: PodStatusManagerOptions) {
    this.scheduleResync();
  }

  set(pod: Pod, status: PodStatus): void {
    const uid = pod.metadata!.uid!;
    const before = this.wanted.get(uid);
    // The same status again (a worker publishes on every wake): nothing new to write.
    if (before?.status && !before.finished && deepEqual(before.status, status)) {
      if (!this.inSync(uid)) this.kick(uid);
      return;
    }
    this.wanted.set(uid, {
      namespace: pod.metadata!.namespace!,
      name: pod.metadata!.name!,
      uid,
      status,
      ...(before?.finished ? { finished: true } : {}),
    });
    this.kick(uid);
  }

  /**
   * The pod was deleted and nothing of it runs any more: write `status` (when given), then
   * delete the pod from the API, trying until it is gone. Called again for a pod already
   * finishing (the agent saw it once more), it tries at once instead of waiting its back-off.
   */
  finish(pod: Pod, status?: PodStatus): void {
    const uid = pod.metadata!.uid!;
    const before = this.wanted.get(uid);
    const retry = this.retries.get(uid);
    if (before?.finished && !status && !retry?.timer) return; // being tried right now
    this.wanted.set(uid, {
      namespace: pod.metadata!.namespace!,
      name: pod.metadata!.name!,
      uid,
      ...((status ?? before?.status) ? { status: status ?? before?.status } : {}),
      finished: true,
    });
    if (retry?.timer) {
      this.options.clock.clearTimeout(retry.timer);
      retry.timer = undefined;
    }
    this.kick(uid);
  }

  /** Whether the pod is finished here and its final delete is not done yet (for tests). */
  finishing(uid: string): boolean {
    return !!this.wanted.get(uid)?.finished;
  }

  forget(uid: string): void {
    this.wanted.delete(uid);
    this.clearRetry(uid);
  }

  /** Resolves once no write is in flight (for tests). */
  async settled(): Promise<void> {
    while (this.writing.size) await Promise.all(this.writing.values());
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) this.options.clock.clearTimeout(this.timer);
    for (const uid of [...this.retries.keys()]) this.clearRetry(uid);
  }

  /** Whether the API already shows what we want (also true for a pod we no longer track). */
  inSync(uid: string): boolean {
    const w = this.wanted.get(uid);
    if (!w) return true;
    // A finished pod is in sync once it is gone, and then it is no longer tracked.
    if (w.finished) return false;
    const cached = this.options.cached(w.namespace, w.name);
    if (!cached || cached.metadata?.uid !== uid) return false;
    if (w.shownBy === cached) return true;
    const shown = !w.status || deepEqual(cached.status, mergeStatus(cached.status, w.status));
    if (shown) w.shownBy = cached;
    return shown;
  }

  private kick(uid: string): void {
    if (this.stopped) return;
    if (this.writing.has(uid)) {
      this.again.add(uid);
      return;
    }
    const run = this.write(uid).finally(() => {
      this.writing.delete(uid);
      if (this.again.delete(uid)) this.kick(uid);
    });
    this.writing.set(uid, run);
  }

  private async write(uid: string): Promise<void> {
    const { client, logger } = this.options;
    for (let attempt = 1; attempt <= 3; attempt++) {
      const w = this.wanted.get(uid);
      if (!w) return;
      const pod = `${w.namespace}/${w.name}`;
      let current = this.options.cached(w.namespace, w.name);
      // A finished pod is read afresh: the cache may still show a pod that is gone.
      if (attempt > 1 || !current || w.finished) {
        try {
          current = await client.get('Pod', w.name, { namespace: w.namespace });
        } catch (err) {
          if (isNotFound(err)) this.gone(w);
          else if (w.finished) this.failed(w, err, 'cannot read the pod');
          else logger.debug({ pod, err: (err as Error).message }, 'cannot read pod; status write waits');
          return;
        }
      }
      if (current.metadata?.uid !== uid) {
        // Another pod of the same name: ours is gone.
        this.gone(w);
        return;
      }
      const status = w.status && mergeStatus(current.status, w.status);
      if (status && !deepEqual(current.status, status)) {
        try {
          current = await client.updateStatus<Pod>({ ...current, status });
          this.writes++;
        } catch (err) {
          if (isNotFound(err)) {
            this.gone(w);
            return;
          }
          if (isConflict(err)) continue;
          if (w.finished && isInvalid(err)) {
            // The API will never take this status: the pod goes all the same.
            logger.warn(
              { pod, err: (err as Error).message },
              'the final status was refused; deleting the pod',
            );
          } else if (w.finished) {
            this.failed(w, err, 'cannot write the final status');
            return;
          } else {
            logger[this.options.contact?.explains(err) ? 'debug' : 'warn'](
              { pod, err: (err as Error).message },
              'cannot write pod status; will retry',
            );
            return;
          }
        }
      }
      if (!w.finished || this.wanted.get(uid) !== w) return;
      try {
        await client.delete('Pod', w.name, {
          namespace: w.namespace,
          gracePeriodSeconds: 0,
          // Never another pod that took the name meanwhile.
          preconditions: { uid },
        });
        this.gone(w);
        logger.info({ pod, podUid: uid }, 'pod finished and removed from the API');
        return;
      } catch (err) {
        if (isNotFound(err)) {
          this.gone(w);
          return;
        }
        // The uid precondition failed (or the store was busy): the next round reads the pod
        // again and finds it gone, renamed to another uid, or still ours to delete.
        if (isConflict(err)) continue;
        this.failed(w, err, 'the final delete failed');
        return;
      }
    }
    // Conflicts all along: try again soon.
    const w = this.wanted.get(uid);
    if (w?.finished) this.failed(w, new Error('the pod kept changing'), 'the final delete failed');
  }

  /** The pod is not in the API (any more): nothing left to write or delete. */
  private gone(w: Wanted): void {
    if (this.wanted.get(w.uid) === w) this.wanted.delete(w.uid);
    this.clearRetry(w.uid);
  }

  /** A finished pod could not be removed yet: try again after a growing wait. */
  private failed(w: Wanted, err: unknown, what: string): void {
    if (this.stopped) return;
    const { clock, logger, contact } = this.options;
    const retry = this.retries.get(w.uid) ?? { failures: 0 };
    this.retries.set(w.uid, retry);
    const initial = this.options.finalDeleteBackoff?.initialMs ?? 1_000;
    const max = this.options.finalDeleteBackoff?.maxMs ?? 30_000;
    const delay = Math.min(initial * 2 ** retry.failures, max);
    retry.failures++;
    // Said once at warn (unless the outage is already explained); the retries at debug.
    const level = retry.failures === 1 && !contact?.explains(err) ? 'warn' : 'debug';
    logger[level](
      { pod: `${w.namespace}/${w.name}`, err: (err as Error).message, retryInMs: delay },
      `${what}; the agent tries again until the pod is gone`,
    );
    if (retry.timer) clock.clearTimeout(retry.timer);
    retry.timer = clock.setTimeout(() => {
      retry.timer = undefined;
      this.kick(w.uid);
    }, delay);
  }

  private clearRetry(uid: string): void {
    const retry = this.retries.get(uid);
    if (retry?.timer) this.options.clock.clearTimeout(retry.timer);
    this.retries.delete(uid);
  }

  private scheduleResync(): void {
    if (this.stopped) return;
    this.timer = this.options.clock.setTimeout(() => {
      for (const uid of this.wanted.keys()) {
        // A finished pod waiting out its back-off is tried when its own timer says.
        if (this.retries.get(uid)?.timer) continue;
        if (!this.inSync(uid)) this.kick(uid);
      }
      this.scheduleResync();
    }, this.options.resyncMs ?? 5_000);
  }
}

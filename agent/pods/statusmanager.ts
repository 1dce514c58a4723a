/**
 * Writing pod statuses (the kubelet's status manager): the workers say what each pod's status
 * should be; this writes it when it differs from what the API holds, one write per pod at a
 * time, the latest wins. While the control plane is away the wanted statuses wait and are
 * written when it returns (a resync every few seconds notices).
 */
import { isConflict, isNotFound } from '../../client/api/errors.js';
import type { Pod, PodStatus } from '../../client/api/types.js';
import type { Client } from '../../client/client.js';
import type { Clock, TimerHandle } from '../../client/util/clock.js';
import { deepEqual } from '../../client/util/objects.js';
import type { ControlPlaneContact } from '../contact.js';
import type { Logger } from '../logger.js';

interface Wanted {
  namespace: string;
  name: string;
  uid: string;
  status: PodStatus;
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
}

export class PodStatusManager {
  private readonly wanted = new Map<string, Wanted>();
  private readonly writing = new Map<string, Promise<void>>();
  private readonly again = new Set<string>();
  private timer: TimerHandle | undefined;
  private stopped = false;
  /** Writes that reached the API (for tests and metrics). */
  writes = 0;

  constructor(private readonly options: PodStatusManagerOptions) {
    this.scheduleResync();
  }

  set(pod: Pod, status: PodStatus): void {
    const uid = pod.metadata!.uid!;
    this.wanted.set(uid, { namespace: pod.metadata!.namespace!, name: pod.metadata!.name!, uid, status });
    this.kick(uid);
  }

  forget(uid: string): void {
    this.wanted.delete(uid);
  }

  /** Resolves once no write is in flight (for tests). */
  async settled(): Promise<void> {
    while (this.writing.size) await Promise.all(this.writing.values());
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) this.options.clock.clearTimeout(this.timer);
  }

  /** Whether the API already shows what we want (also true for a pod we no longer track). */
  inSync(uid: string): boolean {
    const w = this.wanted.get(uid);
    if (!w) return true;
    const cached = this.options.cached(w.namespace, w.name);
    return !!cached && cached.metadata?.uid === uid && deepEqual(cached.status, w.status);
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
      let current = this.options.cached(w.namespace, w.name);
      if (attempt > 1 || !current) {
        try {
          current = await client.get('Pod', w.name, { namespace: w.namespace });
        } catch (err) {
          if (isNotFound(err)) this.wanted.delete(uid);
          else
            logger.debug?.(
              { pod: `${w.namespace}/${w.name}`, err: (err as Error).message },
              'cannot read pod; status write waits',
            );
          return;
        }
      }
      if (current.metadata?.uid !== uid) {
        // Another pod of the same name: ours is gone.
        this.wanted.delete(uid);
        return;
      }
      if (deepEqual(current.status, w.status)) return;
      try {
        await client.updateStatus<Pod>({ ...current, status: w.status });
        this.writes++;
        return;
      } catch (err) {
        if (isNotFound(err)) {
          this.wanted.delete(uid);
          return;
        }
        if (!isConflict(err)) {
          logger[this.options.contact?.explains(err) ? 'debug' : 'warn'](
            { pod: `${w.namespace}/${w.name}`, err: (err as Error).message },
            'cannot write pod status; will retry',
          );
          return;
        }
      }
    }
  }

  private scheduleResync(): void {
    if (this.stopped) return;
    this.timer = this.options.clock.setTimeout(() => {
      for (const uid of this.wanted.keys()) if (!this.inSync(uid)) this.kick(uid);
      this.scheduleResync();
    }, this.options.resyncMs ?? 5_000);
  }
}

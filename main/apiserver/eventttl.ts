/**
 * Events expire (Kubernetes' --event-ttl, 1 hour): the apiserver deletes every Event whose
 * last occurrence is older than the TTL, so they never pile up whoever records them.
 */
import { kindInfo } from '../../client/api/kinds.js';
import type { Event } from '../../client/api/types.js';
import type { Clock, TimerHandle } from '../../client/util/clock.js';
import type { Logger } from '../logging.js';
import type { Storage } from '../storage/types.js';
import type { Cacher } from './cacher.js';

export const DEFAULT_EVENT_TTL_MS = 60 * 60_000;

function lastSeen(e: Event): number {
  const times = [e.lastTimestamp, e.eventTime, e.series?.lastObservedTime, e.metadata?.creationTimestamp]
    .filter((t): t is string => !!t)
    .map((t) => Date.parse(t))
    .filter((t) => !Number.isNaN(t));
  return times.length ? Math.max(...times) : 0;
}

export class EventExpiry {
  private timer: TimerHandle | undefined;
  private stopped = false;

  constructor(
    private readonly cacher: Cacher,
    private readonly storage: Storage,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly ttlMs = DEFAULT_EVENT_TTL_MS,
    private readonly periodMs = 60_000,
  ) {}

  start(): void {
    this.schedule();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) this.clock.clearTimeout(this.timer);
  }

  /** Deletes the expired events now; returns how many went. */
  async sweep(): Promise<number> {
    const cutoff = this.clock.now() - this.ttlMs;
    const expired = this.cacher
      .cache(kindInfo('Event'))
      .list({})
      .items.filter((item) => lastSeen(item.object as Event) < cutoff);
    let deleted = 0;
    for (const item of expired) {
      try {
        await this.storage.delete(item.key, item.rv);
        deleted++;
      } catch {
        // Changed or gone meanwhile: the next sweep looks again.
      }
    }
    if (deleted) this.logger.debug({ deleted }, 'expired events deleted');
    return deleted;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = this.clock.setTimeout(() => {
      this.sweep()
        .catch((err) => this.logger.warn({ err: (err as Error).message }, 'event expiry failed'))
        .finally(() => this.schedule());
    }, this.periodMs);
  }
}

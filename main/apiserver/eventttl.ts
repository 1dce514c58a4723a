/**
 * Events expire (Kubernetes' --event-ttl, 1 hour): the apiserver deletes every Event whose
 * last occurrence is older than the TTL, so they never pile up whoever records them.
 */
import { kindInfo } from '../../client/api/kinds.js';
import type { Event } from '../../client/api/types.js';
import type { Clock, TimerHandle } from '../../client/util/clock.js';
import { nextTurn } from '../../client/util/nextturn.js';
import type { Logger } from '../logging.js';
import type { Storage } from '../storage/types.js';
import type { Cacher } from './cacher.js';

export const DEFAULT_EVENT_TTL_MS = 60 * 60_000;

/** The event's last occurrence, ms (0 when it names none). */
function lastSeen(e: Event): number {
  let latest = 0;
  for (const t of [e.lastTimestamp, e.eventTime, e.series?.lastObservedTime, e.metadata?.creationTimestamp]) {
    if (!t) continue;
    const ms = Date.parse(t);
    if (ms > latest) latest = ms;
  }
  return latest;
}

/** Events looked at between two turns of the event loop: 100,000 events must not stall it. */
const SWEEP_CHUNK = 1000;

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
    const { items } = this.cacher.cache(kindInfo('Event')).list({});
    const expired = [];
    for (let i = 0; i < items.length; i++) {
      if (i > 0 && i % SWEEP_CHUNK === 0) await nextTurn();
      if (lastSeen(items[i].object as Event) < cutoff) expired.push(items[i]);
    }
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

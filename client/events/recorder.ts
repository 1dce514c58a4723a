/**
 * The event recorder (client-go's record package): controllers and agents report what
 * happened to an object as Events. A repeat of the same event updates the existing Event
 * (count, lastTimestamp) instead of creating a new object; each source and object may burst
 * 25 events and then one per 5 minutes, so a flapping node cannot flood the store. Writes are
 * queued and never block the caller; the apiserver expires events after an hour.
 */
import { isNotFound } from '../api/errors.js';
import type { Event, ObjectLike } from '../api/types.js';
import type { Client } from '../client.js';
import { realClock, rfc3339, rfc3339Micro, type Clock } from '../util/clock.js';

export interface EventSource {
  component: string;
  host?: string;
}

export interface EventRecorderOptions {
  clock?: Clock;
  /** Events a source may send about one object at once (default 25). */
  burst?: number;
  /** Then one more per this period (default 5 minutes). */
  refillMs?: number;
  /** How many distinct events are remembered for aggregation (default 4096). */
  cacheSize?: number;
  onError?: (err: Error, event: Event) => void;
}

export type EventType = 'Normal' | 'Warning';

interface Remembered {
  name: string;
  namespace: string;
  count: number;
  firstTimestamp: string;
}

interface Bucket {
  tokens: number;
  at: number;
}

export class EventRecorder {
  private readonly clock: Clock;
  private readonly seen = new Map<string, Remembered>();
  private readonly buckets = new Map<string, Bucket>();
  private queue: Promise<void> = Promise.resolve();
  private pending = 0;
  private lastStamp = 0;

  constructor(
    private readonly client: Client,
    private readonly source: EventSource,
    private readonly options: EventRecorderOptions = {},
  ) {
    this.clock = options.clock ?? realClock;
  }

  /** Records an event about `obj`; returns at once. */
  event(obj: ObjectLike, type: EventType, reason: string, message: string): void {
    const meta = obj.metadata ?? {};
    const involved = {
      kind: obj.kind,
      apiVersion: obj.apiVersion,
      name: meta.name,
      namespace: meta.namespace,
      uid: meta.uid,
      resourceVersion: meta.resourceVersion,
    };
    const objectKey = `${involved.kind}/${involved.namespace ?? ''}/${involved.name}/${involved.uid ?? ''}`;
    if (!this.allow(`${this.source.component}/${this.source.host ?? ''}/${objectKey}`)) return;
    const key = `${objectKey}|${type}|${reason}|${message}`;
    const now = this.clock.now();
    const namespace = meta.namespace || 'default';
    const previous = this.seen.get(key);
    const timestamp = rfc3339(now);
    const event: Event = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: {
        name: previous?.name ?? this.eventName(meta.name ?? 'unknown', now),
        namespace,
      },
      involvedObject: Object.fromEntries(Object.entries(involved).filter(([, v]) => v !== undefined)),
      reason,
      message,
      type,
      source: { component: this.source.component, ...(this.source.host ? { host: this.source.host } : {}) },
      reportingComponent: this.source.component,
      ...(this.source.host ? { reportingInstance: this.source.host } : {}),
      firstTimestamp: previous?.firstTimestamp ?? timestamp,
      lastTimestamp: timestamp,
      eventTime: rfc3339Micro(now),
      count: (previous?.count ?? 0) + 1,
    };
    this.remember(key, {
      name: event.metadata!.name!,
      namespace,
      count: event.count!,
      firstTimestamp: event.firstTimestamp!,
    });
    this.enqueue(event, previous !== undefined);
  }

  /**
   * "<object>.<hex time>", like Kubernetes; strictly increasing per recorder (and salted, for
   * other recorders) so events in the same millisecond never collide.
   */
  private eventName(objectName: string, now: number): string {
    this.lastStamp = Math.max(now * 1000, this.lastStamp + 1);
    const salt = Math.floor(Math.random() * 256)
      .toString(16)
      .padStart(2, '0');
    return `${objectName}.${this.lastStamp.toString(16)}${salt}`;
  }

  /** Resolves when every queued event has been written (or has failed). */
  async flush(): Promise<void> {
    while (this.pending > 0) await this.queue;
  }

  private async write(event: Event, isRepeat: boolean): Promise<void> {
    if (isRepeat) {
      try {
        await this.client.patch(
          'Event',
          event.metadata!.name!,
          { count: event.count, lastTimestamp: event.lastTimestamp, eventTime: event.eventTime },
          { namespace: event.metadata!.namespace },
        );
        return;
      } catch (err) {
        // It expired or was deleted meanwhile: record it anew.
        if (!isNotFound(err)) throw err;
      }
    }
    await this.client.create(event);
  }

  private enqueue(event: Event, isRepeat: boolean): void {
    this.pending++;
    this.queue = this.queue
      .then(() => this.write(event, isRepeat))
      .catch((err: Error) => this.options.onError?.(err, event))
      .finally(() => this.pending--);
  }

  private allow(key: string): boolean {
    const burst = this.options.burst ?? 25;
    const refill = this.options.refillMs ?? 5 * 60_000;
    const now = this.clock.now();
    const b = this.buckets.get(key) ?? { tokens: burst, at: now };
    b.tokens = Math.min(burst, b.tokens + (now - b.at) / refill);
    b.at = now;
    this.buckets.set(key, b);
    if (b.tokens < 1) return false;
    b.tokens -= 1;
    return true;
  }

  private remember(key: string, r: Remembered): void {
    this.seen.delete(key);
    this.seen.set(key, r);
    const max = this.options.cacheSize ?? 4096;
    while (this.seen.size > max) this.seen.delete(this.seen.keys().next().value!);
    while (this.buckets.size > max) this.buckets.delete(this.buckets.keys().next().value!);
  }
}

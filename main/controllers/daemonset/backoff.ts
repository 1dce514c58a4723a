/**
 * Per-key exponential backoff measured from the last update (client-go's flowcontrol.Backoff
 * as the DaemonSet controller uses it for failed pods: 1 s doubling to 15 min). An entry idle
 * for twice the maximum starts over.
 */
export interface BackoffEntry {
  backoffMs: number;
  lastUpdate: number;
}

export class PerKeyBackoff {
  private readonly entries = new Map<string, BackoffEntry>();

  constructor(
    readonly initialMs = 1_000,
    readonly maxMs = 15 * 60_000,
  ) {}

  /** The current wait for `key` (0 when none). */
  get(key: string): number {
    return this.entries.get(key)?.backoffMs ?? 0;
  }

  /** Still within the wait that started at the last update. */
  isInBackOffSinceUpdate(key: string, now: number): boolean {
    const e = this.entries.get(key);
    if (!e || this.expired(e, now)) return false;
    return now - e.lastUpdate < e.backoffMs;
  }

  /** Records another failure: the first waits initialMs, each next one twice as long. */
  next(key: string, now: number): void {
    const e = this.entries.get(key);
    if (!e || this.expired(e, now)) this.entries.set(key, { backoffMs: this.initialMs, lastUpdate: now });
    else this.entries.set(key, { backoffMs: Math.min(e.backoffMs * 2, this.maxMs), lastUpdate: now });
  }

  /** Drops entries idle long enough to have expired. */
  gc(now: number): void {
    for (const [k, e] of this.entries) if (this.expired(e, now)) this.entries.delete(k);
  }

  private expired(e: BackoffEntry, now: number): boolean {
    return now - e.lastUpdate > 2 * this.maxMs;
  }
}

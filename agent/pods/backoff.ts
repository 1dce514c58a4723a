/**
 * CrashLoopBackOff (the kubelet's container restart backoff): the first restart after an exit
 * is immediate, then 10 s, 20 s, 40 s … up to 5 minutes; a container that ran for 10 minutes
 * before exiting starts over.
 */
export interface CrashLoopBackoffOptions {
  initialMs?: number;
  maxMs?: number;
  resetAfterMs?: number;
}

export class CrashLoopBackoff {
  private readonly entries = new Map<string, { delayMs: number; lastExit: number }>();
  private readonly initialMs: number;
  private readonly maxMs: number;
  private readonly resetAfterMs: number;

  constructor(options: CrashLoopBackoffOptions = {}) {
    this.initialMs = options.initialMs ?? 10_000;
    this.maxMs = options.maxMs ?? 300_000;
    this.resetAfterMs = options.resetAfterMs ?? 600_000;
  }

  /** When the container may start again after exiting at `finishedAt` (the current delay is then used up). */
  restartAt(key: string, finishedAt: number): number {
    const entry = this.entries.get(key);
    if (!entry || finishedAt - entry.lastExit >= this.resetAfterMs) {
      this.entries.set(key, { delayMs: this.initialMs, lastExit: finishedAt });
      return finishedAt;
    }
    const at = finishedAt + entry.delayMs;
    entry.delayMs = Math.min(entry.delayMs * 2, this.maxMs);
    entry.lastExit = finishedAt;
    return at;
  }

  forget(prefix: string): void {
    for (const key of this.entries.keys()) if (key.startsWith(prefix)) this.entries.delete(key);
  }
}

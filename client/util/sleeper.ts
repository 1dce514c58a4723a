/**
 * Interruptible sleeps on an injectable clock, for loops that must stop (or wake) promptly:
 * `sleep` resolves when the time is up or when `wake`/`stop` is called.
 */
import type { Clock, TimerHandle } from './clock.js';

export class Sleeper {
  private pending: { handle: TimerHandle; resolve(): void } | undefined;
  private stopped = false;

  constructor(private readonly clock: Clock) {}

  get isStopped(): boolean {
    return this.stopped;
  }

  sleep(ms: number): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return new Promise((resolve) => {
      const handle = this.clock.setTimeout(() => {
        this.pending = undefined;
        resolve();
      }, ms);
      this.pending = { handle, resolve };
    });
  }

  /** Ends the current sleep early. */
  wake(): void {
    const p = this.pending;
    if (!p) return;
    this.pending = undefined;
    this.clock.clearTimeout(p.handle);
    p.resolve();
  }

  /** Ends the current sleep, and makes every later one return at once. */
  stop(): void {
    this.stopped = true;
    this.wake();
  }
}

/**
 * Injectable time. Everything time-dependent takes a Clock so tests move time instead of
 * sleeping; production uses `realClock`.
 */
export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

export interface TimerHandle {
  readonly id: number;
}

let nextId = 1;

/** Node fires a timer longer than this (about 24.8 days) after 1 ms: longer waits go in legs. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

type RealHandle = TimerHandle & { t: NodeJS.Timeout };

export const realClock: Clock = {
  now: () => Date.now(),
  setTimeout(fn, ms) {
    const handle = { id: nextId++ } as RealHandle;
    const arm = (left: number) => {
      handle.t = setTimeout(
        left > MAX_TIMER_MS ? () => arm(left - MAX_TIMER_MS) : fn,
        Math.min(left, MAX_TIMER_MS),
      );
      handle.t.unref?.();
    };
    arm(Math.max(0, ms));
    return handle;
  },
  clearTimeout(handle) {
    clearTimeout((handle as RealHandle).t);
  },
};

/** A clock that only moves when told: `advance(ms)` fires the timers that fall due, in order. */
export class FakeClock implements Clock {
  private timers: Array<{ id: number; at: number; fn: () => void }> = [];

  constructor(private current = Date.parse('2026-01-01T00:00:00Z')) {}

  now(): number {
    return this.current;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const id = nextId++;
    this.timers.push({ id, at: this.current + Math.max(0, ms), fn });
    return { id };
  }

  clearTimeout(handle: TimerHandle): void {
    this.timers = this.timers.filter((t) => t.id !== handle.id);
  }

  /** Moves time forward, firing due timers (and timers they schedule) in time order. */
  advance(ms: number): void {
    const target = this.current + ms;
    for (;;) {
      this.timers.sort((a, b) => a.at - b.at || a.id - b.id);
      const next = this.timers[0];
      if (!next || next.at > target) break;
      this.timers.shift();
      this.current = Math.max(this.current, next.at);
      next.fn();
    }
    this.current = target;
  }

  pendingTimers(): number {
    return this.timers.length;
  }
}

/** Kubernetes' timestamp format: RFC 3339, whole seconds, UTC. */
export function rfc3339(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** Kubernetes MicroTime: RFC 3339 with microseconds. */
export function rfc3339Micro(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

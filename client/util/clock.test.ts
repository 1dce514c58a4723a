import { afterEach, describe, expect, it, vi } from 'vitest';
import { MAX_TIMER_MS, realClock } from './clock.js';

describe('realClock', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('waits out a delay longer than Node allows (24.8 days), in legs, and can still be cancelled', () => {
    vi.useFakeTimers();
    const fired: string[] = [];
    realClock.setTimeout(() => fired.push('long'), MAX_TIMER_MS + 1_000);
    const cancelled = realClock.setTimeout(() => fired.push('cancelled'), 2 * MAX_TIMER_MS);
    vi.advanceTimersByTime(MAX_TIMER_MS);
    expect(fired).toEqual([]);
    realClock.clearTimeout(cancelled);
    vi.advanceTimersByTime(1_000);
    expect(fired).toEqual(['long']);
    vi.advanceTimersByTime(2 * MAX_TIMER_MS);
    expect(fired).toEqual(['long']);
  });
});

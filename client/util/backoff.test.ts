import { describe, expect, it } from 'vitest';
import { Backoff, between, jittered } from './backoff.js';
import { FakeClock } from './clock.js';

describe('Backoff', () => {
  it('doubles from 800 ms to a 30 s cap', () => {
    const clock = new FakeClock();
    const b = new Backoff({ initialMs: 800, maxMs: 30_000 }, clock);
    expect(Array.from({ length: 8 }, () => b.next())).toEqual([
      800, 1600, 3200, 6400, 12800, 25600, 30000, 30000,
    ]);
  });

  it('adds jitter within its bounds', () => {
    const clock = new FakeClock();
    for (const r of [0, 0.5, 0.999]) {
      const b = new Backoff({ initialMs: 800, maxMs: 30_000, jitter: 1, random: () => r }, clock);
      const d = b.next();
      expect(d).toBeGreaterThanOrEqual(800);
      expect(d).toBeLessThan(1600);
      expect(d).toBeCloseTo(800 + r * 800);
    }
    for (let i = 0; i < 1000; i++) {
      const j = jittered(1000, 0.5);
      expect(j).toBeGreaterThanOrEqual(1000);
      expect(j).toBeLessThan(1500);
      const w = between(300_000, 600_000);
      expect(w).toBeGreaterThanOrEqual(300_000);
      expect(w).toBeLessThan(600_000);
    }
  });

  it('starts over after two minutes of health', () => {
    const clock = new FakeClock();
    const b = new Backoff({ initialMs: 800, maxMs: 30_000, resetAfterMs: 120_000 }, clock);
    b.next();
    b.next();
    clock.advance(119_000);
    expect(b.next()).toBe(3200);
    clock.advance(120_000);
    expect(b.next()).toBe(800);
  });
});

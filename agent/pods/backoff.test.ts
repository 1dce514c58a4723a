import { describe, expect, it } from 'vitest';
import { CrashLoopBackoff } from './backoff.js';

describe('CrashLoopBackOff', () => {
  it('restarts at once, then after 10 s doubling to 5 minutes', () => {
    const b = new CrashLoopBackoff();
    let t = 0;
    const delays: number[] = [];
    for (let i = 0; i < 8; i++) {
      const at = b.restartAt('p/c', t);
      delays.push(at - t);
      t = at + 1_000; // it runs a second, then exits again
    }
    expect(delays).toEqual([0, 10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000]);
  });

  it('starts over after 10 minutes of running, and per container', () => {
    const b = new CrashLoopBackoff();
    b.restartAt('p/c', 0);
    expect(b.restartAt('p/c', 1_000)).toBe(11_000);
    expect(b.restartAt('p/other', 1_000)).toBe(1_000);
    expect(b.restartAt('p/c', 11_000 + 600_000)).toBe(611_000);
    b.forget('p/');
    expect(b.restartAt('p/c', 700_000)).toBe(700_000);
  });
});

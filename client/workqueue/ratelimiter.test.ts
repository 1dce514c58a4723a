import { describe, expect, it } from 'vitest';
import { FakeClock } from '../util/clock.js';
import {
  BucketRateLimiter,
  defaultControllerRateLimiter,
  ItemExponentialFailureRateLimiter,
  ItemFastSlowRateLimiter,
  MaxOfRateLimiter,
  WithMaxWaitRateLimiter,
} from './ratelimiter.js';

const times = <T>(n: number, f: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => f(i));

describe('ItemExponentialFailureRateLimiter', () => {
  it('doubles from 5 ms per failure up to 1000 s by default', () => {
    const r = new ItemExponentialFailureRateLimiter();
    const delays = times(21, () => r.when('a'));
    expect(delays).toEqual([
      5, 10, 20, 40, 80, 160, 320, 640, 1280, 2560, 5120, 10240, 20480, 40960, 81920, 163840, 327680, 655360,
      1_000_000, 1_000_000, 1_000_000,
    ]);
    expect(r.numRequeues('a')).toBe(21);
  });

  it('counts each item on its own and forgets on request', () => {
    const r = new ItemExponentialFailureRateLimiter(1, 1000);
    expect([r.when('a'), r.when('a'), r.when('b'), r.when('a')]).toEqual([1, 2, 1, 4]);
    expect(r.numRequeues('a')).toBe(3);
    expect(r.numRequeues('b')).toBe(1);
    r.forget('a');
    expect(r.numRequeues('a')).toBe(0);
    expect(r.when('a')).toBe(1);
    expect(r.when('b')).toBe(2);
  });

  it('stays at the cap for huge failure counts instead of overflowing', () => {
    const r = new ItemExponentialFailureRateLimiter(5, 1_000_000);
    let last = 0;
    for (let i = 0; i < 5000; i++) last = r.when('a');
    expect(last).toBe(1_000_000);
    expect(r.numRequeues('a')).toBe(5000);
  });
});

describe('ItemFastSlowRateLimiter', () => {
  it('is fast for the first attempts, then slow, per item', () => {
    const r = new ItemFastSlowRateLimiter(5, 10_000, 3);
    expect(times(5, () => r.when('a'))).toEqual([5, 5, 5, 10_000, 10_000]);
    expect(r.when('b')).toBe(5);
    expect(r.numRequeues('a')).toBe(5);
    r.forget('a');
    expect(r.numRequeues('a')).toBe(0);
    expect(r.when('a')).toBe(5);
  });
});

describe('BucketRateLimiter', () => {
  it('lets a burst through, then spaces reservations at 1/qps', () => {
    const clock = new FakeClock();
    const r = new BucketRateLimiter(10, 100, clock);
    expect(times(100, (i) => r.when(`k${i}`))).toEqual(times(100, () => 0));
    expect(times(3, () => r.when('x'))).toEqual([100, 200, 300]);
    // It tracks no items.
    expect(r.numRequeues('x')).toBe(0);
    r.forget('x');
    expect(r.when('x')).toBe(400);
  });

  it('refills with time, up to the burst', () => {
    const clock = new FakeClock();
    const r = new BucketRateLimiter(10, 100, clock);
    for (let i = 0; i < 101; i++) r.when('a'); // tokens: -1
    clock.advance(100); // +1 token: 0
    expect(r.when('a')).toBe(100);
    clock.advance(50); // -1 + 0.5
    expect(r.when('a')).toBe(150);
    clock.advance(3_600_000); // refills to the burst, no more
    expect(times(100, () => r.when('a'))).toEqual(times(100, () => 0));
    expect(r.when('a')).toBe(100);
  });

  it('defaults to 10 qps with a burst of 100', () => {
    const r = new BucketRateLimiter(undefined, undefined, new FakeClock());
    for (let i = 0; i < 100; i++) expect(r.when('a')).toBe(0);
    expect(r.when('a')).toBe(100);
  });

  it('rejects settings that could never hand out a token', () => {
    expect(() => new BucketRateLimiter(0, 10)).toThrow(/qps/);
    expect(() => new BucketRateLimiter(10, 0)).toThrow(/burst/);
    const unlimited = new BucketRateLimiter(Infinity, 0);
    expect(times(1000, () => unlimited.when('a')).every((d) => d === 0)).toBe(true);
  });
});

describe('MaxOfRateLimiter', () => {
  it('waits for the longest answer and consults every limiter each time', () => {
    const clock = new FakeClock();
    const bucket = new BucketRateLimiter(1, 2, clock);
    const r = new MaxOfRateLimiter(new ItemExponentialFailureRateLimiter(5, 60_000), bucket);
    expect(r.when('a')).toBe(5); // exp 5, bucket 0
    expect(r.when('a')).toBe(10); // exp 10, bucket 0
    expect(r.when('b')).toBe(1000); // exp 5, bucket 1000
    expect(r.when('a')).toBe(2000); // exp 20, bucket 2000
    expect(r.numRequeues('a')).toBe(3);
  });

  it('forgets in every limiter and reports the largest requeue count', () => {
    const fastSlow = new ItemFastSlowRateLimiter(1, 100, 1);
    const exp = new ItemExponentialFailureRateLimiter(1, 1000);
    const r = new MaxOfRateLimiter(fastSlow, exp);
    exp.when('a');
    exp.when('a');
    r.when('a');
    expect(r.numRequeues('a')).toBe(3);
    r.forget('a');
    expect(r.numRequeues('a')).toBe(0);
    expect(fastSlow.numRequeues('a')).toBe(0);
    expect(r.when('a')).toBe(1);
  });
});

describe('WithMaxWaitRateLimiter', () => {
  it('caps the wrapped delay', () => {
    const r = new WithMaxWaitRateLimiter(new ItemExponentialFailureRateLimiter(100, 100_000), 250);
    expect(times(4, () => r.when('a'))).toEqual([100, 200, 250, 250]);
    expect(r.numRequeues('a')).toBe(4);
    r.forget('a');
    expect(r.when('a')).toBe(100);
  });
});

describe('defaultControllerRateLimiter', () => {
  it('backs off per item and caps overall retries at 10 qps after a burst of 100', () => {
    const clock = new FakeClock();
    const r = defaultControllerRateLimiter(clock);
    expect(times(4, () => r.when('a'))).toEqual([5, 10, 20, 40]);
    // 96 more distinct items use up the burst, then the bucket dominates.
    expect(times(96, (i) => r.when(`k${i}`))).toEqual(times(96, () => 5));
    expect(r.when('new')).toBe(100);
    expect(r.when('a')).toBe(200); // exp 80 < bucket 200
    r.forget('a');
    expect(r.numRequeues('a')).toBe(0);
    clock.advance(3_600_000);
    expect(r.when('a')).toBe(5);
  });

  it('reaches the 1000 s cap for one item that keeps failing', () => {
    const r = defaultControllerRateLimiter(new FakeClock());
    let last = 0;
    for (let i = 0; i < 30; i++) last = r.when('a');
    expect(last).toBe(1_000_000);
  });
});

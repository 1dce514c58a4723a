import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../../client/util/clock.js';
import { RateLimitedTimedQueue } from './ratelimitedqueue.js';

describe('RateLimitedTimedQueue', () => {
  async function drain(q: RateLimitedTimedQueue, clock: FakeClock, seconds: number) {
    const done: Array<[string, number]> = [];
    const start = clock.now();
    for (let ms = 0; ms <= seconds * 1000; ms += 100) {
      await q.try(async (item) => {
        done.push([item.value, (clock.now() - start) / 1000]);
        return { done: true };
      });
      clock.advance(100);
    }
    return done;
  }

  it('works items oldest first at the rate, the first at once', async () => {
    const clock = new FakeClock(0);
    const q = new RateLimitedTimedQueue(clock, 0.1);
    for (const n of ['a', 'b', 'c']) q.add(n);
    expect(q.add('a')).toBe(false);
    expect(await drain(q, clock, 25)).toEqual([
      ['a', 0],
      ['b', 10],
      ['c', 20],
    ]);
  });

  it('stops at rate 0 and starts again with a full bucket when the rate changes', async () => {
    const clock = new FakeClock(0);
    const q = new RateLimitedTimedQueue(clock, 0);
    q.add('a');
    q.add('b');
    expect(await drain(q, clock, 30)).toEqual([]);
    q.swapLimiter(1);
    expect(await drain(q, clock, 2)).toEqual([
      ['a', 0],
      ['b', 1],
    ]);
  });

  it('tries a failed item again after its delay; a removed item is skipped', async () => {
    const clock = new FakeClock(0);
    const q = new RateLimitedTimedQueue(clock, 100);
    q.add('a');
    q.add('b');
    q.remove('b');
    let attempts = 0;
    await q.try(async () => ({ done: false, retryAfterMs: 50 }));
    for (let i = 0; i < 10; i++) {
      clock.advance(10);
      await q.try(async () => {
        attempts++;
        return { done: true };
      });
    }
    expect(attempts).toBe(1);
    expect(q.size).toBe(0);
  });
});

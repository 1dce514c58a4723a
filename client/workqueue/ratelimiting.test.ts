import { describe, expect, it } from 'vitest';
import { FakeClock } from '../util/clock.js';
import { ItemExponentialFailureRateLimiter } from './ratelimiter.js';
import { newRateLimitingQueue, RateLimitingQueue } from './ratelimiting.js';

describe('RateLimitingQueue', () => {
  it('requeues a failing item with growing delays until it is forgotten', async () => {
    const clock = new FakeClock();
    const q = newRateLimitingQueue({ clock }); // default controller rate limiter on the fake clock
    q.add('a');

    const tries: number[] = [];
    let failuresLeft = 3;
    const start = clock.now();
    const tryOnce = async () => {
      const r = await q.get();
      if (r.shutdown) throw new Error('unexpected shutdown');
      tries.push(clock.now() - start);
      if (failuresLeft-- > 0) q.addRateLimited(r.item);
      else q.forget(r.item);
      q.done(r.item);
    };

    await tryOnce(); // fails: retry in 5 ms
    expect(q.numRequeues('a')).toBe(1);
    expect(q.len()).toBe(0);
    clock.advance(4);
    expect(q.len()).toBe(0);
    clock.advance(1);
    expect(q.len()).toBe(1);

    await tryOnce(); // fails: retry in 10 ms
    clock.advance(10);
    await tryOnce(); // fails: retry in 20 ms
    clock.advance(19);
    expect(q.len()).toBe(0);
    clock.advance(1);
    await tryOnce(); // succeeds
    expect(tries).toEqual([0, 5, 15, 35]);
    expect(q.numRequeues('a')).toBe(0);

    clock.advance(10_000);
    expect(q.len()).toBe(0);
    expect(clock.pendingTimers()).toBe(0);

    // Forgotten: the next failure starts from the base delay again.
    q.addRateLimited('a');
    clock.advance(5);
    expect(q.len()).toBe(1);
  });

  it('delivers an item requeued by its own worker only after done()', async () => {
    const clock = new FakeClock();
    const q = new RateLimitingQueue({ clock, rateLimiter: new ItemExponentialFailureRateLimiter(1, 10) });
    q.add('a');
    const r = await q.get();
    q.addRateLimited('a');
    clock.advance(1); // due while still being processed: dirty, not queued
    expect(q.len()).toBe(0);
    q.done(r.item!);
    expect(q.len()).toBe(1);
    expect(await q.get()).toEqual({ item: 'a', shutdown: false });
  });

  it('runs a worker pool end to end and stops cleanly', async () => {
    const clock = new FakeClock();
    const q = newRateLimitingQueue<string>({ clock, name: 'test' });
    const attempts = new Map<string, number>();
    const synced: string[] = [];
    const sync = (key: string) => {
      const n = (attempts.get(key) ?? 0) + 1;
      attempts.set(key, n);
      if (key.startsWith('flaky') && n < 3) throw new Error('try again');
      synced.push(key);
    };
    const worker = async () => {
      for (;;) {
        const r = await q.get();
        if (r.shutdown) return;
        try {
          sync(r.item);
          q.forget(r.item);
        } catch {
          q.addRateLimited(r.item);
        } finally {
          q.done(r.item);
        }
      }
    };
    const workers = [worker(), worker()];
    for (const k of ['ok-1', 'flaky-1', 'ok-2', 'flaky-2']) q.add(k);
    const settle = async () => {
      for (let i = 0; i < 50; i++) await Promise.resolve();
    };
    await settle();
    expect(synced).toEqual(['ok-1', 'ok-2']);
    clock.advance(5);
    await settle();
    expect(synced).toEqual(['ok-1', 'ok-2']);
    clock.advance(10);
    await settle();
    expect(synced.sort()).toEqual(['flaky-1', 'flaky-2', 'ok-1', 'ok-2']);
    expect(attempts.get('flaky-1')).toBe(3);

    await q.shutDownWithDrain();
    await Promise.all(workers);
  });
});

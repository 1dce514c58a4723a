import { describe, expect, it } from 'vitest';
import { FakeClock } from '../util/clock.js';
import { DelayingQueue } from './delaying.js';

async function takeAll(q: DelayingQueue<string>): Promise<string[]> {
  const out: string[] = [];
  while (q.len() > 0) {
    const r = await q.get();
    if (r.shutdown) break;
    out.push(r.item);
    q.done(r.item);
  }
  return out;
}

describe('DelayingQueue', () => {
  it('adds items when their delay has passed, soonest first', async () => {
    const clock = new FakeClock();
    const q = new DelayingQueue({ clock });
    q.addAfter('slow', 100);
    q.addAfter('fast', 50);
    q.addAfter('mid', 75);
    expect(q.len()).toBe(0);
    expect(q.waitingLen()).toBe(3);

    clock.advance(49);
    expect(q.len()).toBe(0);
    clock.advance(1);
    expect(await takeAll(q)).toEqual(['fast']);
    clock.advance(50);
    expect(await takeAll(q)).toEqual(['mid', 'slow']);
    expect(q.waitingLen()).toBe(0);
  });

  it('keeps items due at the same time in the order they were added', async () => {
    const clock = new FakeClock();
    const q = new DelayingQueue({ clock });
    for (const k of ['c', 'a', 'b']) q.addAfter(k, 10);
    clock.advance(10);
    expect(await takeAll(q)).toEqual(['c', 'a', 'b']);
  });

  it('adds at once for a delay of zero or less', () => {
    const q = new DelayingQueue({ clock: new FakeClock() });
    q.addAfter('a', 0);
    q.addAfter('b', -5);
    expect(q.len()).toBe(2);
    expect(q.waitingLen()).toBe(0);
  });

  it('moves a waiting item earlier but never later', async () => {
    const clock = new FakeClock();
    const q = new DelayingQueue({ clock });
    q.addAfter('a', 100);
    q.addAfter('a', 30); // earlier: wins
    q.addAfter('a', 500); // later: ignored
    expect(q.waitingLen()).toBe(1);
    expect(clock.pendingTimers()).toBe(1);

    clock.advance(30);
    expect(await takeAll(q)).toEqual(['a']);
    // Nothing else fires later.
    expect(clock.pendingTimers()).toBe(0);
    clock.advance(1000);
    expect(q.len()).toBe(0);
  });

  it('does not queue a delayed item twice when it is already queued', async () => {
    const clock = new FakeClock();
    const q = new DelayingQueue({ clock });
    q.add('a');
    q.addAfter('a', 10);
    clock.advance(10);
    expect(q.len()).toBe(1);
    expect(await takeAll(q)).toEqual(['a']);
  });

  it('cancels pending delays on shutdown', async () => {
    const clock = new FakeClock();
    const q = new DelayingQueue({ clock });
    q.addAfter('a', 10);
    q.addAfter('b', 20);
    q.shutDown();
    expect(clock.pendingTimers()).toBe(0);
    expect(q.waitingLen()).toBe(0);
    clock.advance(100);
    q.addAfter('c', 5);
    expect(clock.pendingTimers()).toBe(0);
    expect(await q.get()).toEqual({ item: undefined, shutdown: true });
  });

  it('cancels pending delays on shutDownWithDrain too', async () => {
    const clock = new FakeClock();
    const q = new DelayingQueue({ clock });
    q.add('busy');
    await q.get();
    q.addAfter('later', 10);
    const drain = q.shutDownWithDrain();
    expect(clock.pendingTimers()).toBe(0);
    q.done('busy');
    await drain;
  });
});

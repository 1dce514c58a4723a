import { describe, expect, it } from 'vitest';
import { FakeClock } from '../util/clock.js';
import { type GetResult, Queue } from './queue.js';

/** Lets every settled promise run its callbacks (microtasks only; no timers). */
async function flush(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
}

/** Tracks a pending `get()` so a test can ask whether it has resolved yet. */
function pending<T>(p: Promise<GetResult<T>>): { result: GetResult<T> | undefined } {
  const box: { result: GetResult<T> | undefined } = { result: undefined };
  void p.then((r) => (box.result = r));
  return box;
}

async function drainAll(q: Queue<string>): Promise<string[]> {
  const out: string[] = [];
  while (q.len() > 0) {
    const r = await q.get();
    if (r.shutdown) break;
    out.push(r.item);
    q.done(r.item);
  }
  return out;
}

describe('Queue', () => {
  it('hands items out first in, first out', async () => {
    const q = new Queue();
    for (const k of ['c', 'a', 'b', 'd']) q.add(k);
    expect(q.len()).toBe(4);
    expect(await drainAll(q)).toEqual(['c', 'a', 'b', 'd']);
    expect(q.len()).toBe(0);
  });

  it('queues an item at most once', async () => {
    const q = new Queue();
    q.add('a');
    q.add('b');
    q.add('a');
    q.add('a');
    expect(q.len()).toBe(2);
    expect(await drainAll(q)).toEqual(['a', 'b']);
  });

  it('holds back an item re-added while a worker has it until done()', async () => {
    const q = new Queue();
    q.add('a');
    const first = await q.get();
    expect(first).toEqual({ item: 'a', shutdown: false });

    q.add('a'); // dirty while processing
    q.add('a'); // still once
    expect(q.len()).toBe(0);
    const second = pending(q.get());
    await flush();
    expect(second.result).toBeUndefined();

    q.done('a');
    await flush();
    expect(second.result).toEqual({ item: 'a', shutdown: false });
    // Delivered once only.
    expect(q.len()).toBe(0);
  });

  it('never gives one item to two waiting workers', async () => {
    const q = new Queue();
    const getters = [pending(q.get()), pending(q.get()), pending(q.get())];
    q.add('a');
    q.add('a');
    await flush();
    expect(getters.map((g) => g.result?.item)).toEqual(['a', undefined, undefined]);

    q.add('a'); // while processing
    q.add('b');
    await flush();
    expect(getters.map((g) => g.result?.item)).toEqual(['a', 'b', undefined]);

    q.done('a');
    await flush();
    expect(getters.map((g) => g.result?.item)).toEqual(['a', 'b', 'a']);
  });

  it('keeps every item with at most one worker under concurrent load', async () => {
    const q = new Queue();
    const inFlight = new Set<string>();
    const processed: string[] = [];
    let overlaps = 0;
    const worker = async () => {
      for (;;) {
        const r = await q.get();
        if (r.shutdown) return;
        if (inFlight.has(r.item)) overlaps++;
        inFlight.add(r.item);
        // Re-add keys while they are being worked on, and yield so other workers run.
        q.add(r.item);
        await flush();
        inFlight.delete(r.item);
        processed.push(r.item);
        q.done(r.item);
        if (processed.length >= 60) q.shutDown();
      }
    };
    const workers = Array.from({ length: 4 }, worker);
    for (const k of ['x', 'y', 'z', 'x', 'y']) q.add(k);
    await Promise.all(workers);
    expect(overlaps).toBe(0);
    expect(processed.length).toBeGreaterThanOrEqual(60);
    expect(new Set(processed)).toEqual(new Set(['x', 'y', 'z']));
  });

  it('wakes waiting workers with shutdown on shutDown()', async () => {
    const q = new Queue();
    const a = pending(q.get());
    const b = pending(q.get());
    await flush();
    expect(a.result).toBeUndefined();
    q.shutDown();
    await flush();
    expect(a.result).toEqual({ item: undefined, shutdown: true });
    expect(b.result).toEqual({ item: undefined, shutdown: true });
    expect(q.shuttingDown()).toBe(true);

    q.add('late');
    expect(q.len()).toBe(0);
    expect(await q.get()).toEqual({ item: undefined, shutdown: true });
  });

  it('still hands out items queued before the shutdown, as client-go does', async () => {
    const q = new Queue();
    q.add('a');
    q.add('b');
    q.shutDown();
    expect(await q.get()).toEqual({ item: 'a', shutdown: false });
    expect(await q.get()).toEqual({ item: 'b', shutdown: false });
    expect(await q.get()).toEqual({ item: undefined, shutdown: true });
  });

  it('shutDownWithDrain() waits for in-flight items to be done', async () => {
    const q = new Queue();
    q.add('a');
    q.add('b');
    await q.get();
    await q.get();
    let drained = false;
    const drain = q.shutDownWithDrain().then(() => (drained = true));
    expect(q.shuttingDown()).toBe(true);
    q.add('c');
    expect(q.len()).toBe(0);

    await flush();
    expect(drained).toBe(false);
    q.done('a');
    await flush();
    expect(drained).toBe(false);
    q.done('b');
    await drain;
    expect(drained).toBe(true);
  });

  it('shutDownWithDrain() resolves at once with nothing in flight, and shutDown() cuts a drain short', async () => {
    await new Queue().shutDownWithDrain();

    const q = new Queue();
    q.add('a');
    await q.get();
    let drained = false;
    const drain = q.shutDownWithDrain().then(() => (drained = true));
    await flush();
    expect(drained).toBe(false);
    q.shutDown();
    await drain;
    expect(drained).toBe(true);
  });

  it('ignores done() for an item no worker holds', async () => {
    const q = new Queue();
    q.add('a');
    q.done('a');
    q.done('zzz');
    expect(q.len()).toBe(1);
    expect(await drainAll(q)).toEqual(['a']);
  });

  it('reports how long in-flight work has been running', async () => {
    const clock = new FakeClock();
    const q = new Queue({ clock });
    q.add('a');
    q.add('b');
    await q.get();
    clock.advance(3000);
    await q.get();
    clock.advance(1000);
    expect(q.unfinishedWorkSeconds()).toBe(5);
    expect(q.longestRunningProcessorSeconds()).toBe(4);
    q.done('a');
    expect(q.unfinishedWorkSeconds()).toBe(1);
    expect(q.longestRunningProcessorSeconds()).toBe(1);
  });

  it('stays correct past the point where it compacts its backing array', async () => {
    const q = new Queue();
    for (let i = 0; i < 3000; i++) q.add(`k${i}`);
    for (let i = 0; i < 2000; i++) {
      const r = await q.get();
      expect(r.item).toBe(`k${i}`);
      q.done(r.item!);
    }
    q.add('k0');
    expect(q.len()).toBe(1001);
    const rest = await drainAll(q);
    expect(rest[0]).toBe('k2000');
    expect(rest.at(-1)).toBe('k0');
    expect(rest).toHaveLength(1001);
  });
});

import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../client/api/errors.js';
import type { Identity } from '../../../client/api/local.js';
import { FakeClock } from '../../../client/util/clock.js';
import { FlowControl } from './dispatcher.js';
import type { FlowControlConfig } from './levels.js';

const CONFIG: FlowControlConfig = {
  'node-high': { seats: 2, queueLength: 4, queueWaitMs: 10_000 },
  system: { seats: 2, queueLength: 4, queueWaitMs: 10_000 },
  'workload-high': { seats: 2, queueLength: 4, queueWaitMs: 10_000 },
  'global-default': { seats: 2, queueLength: 4, queueWaitMs: 10_000 },
};
const alice: Identity = { name: 'alice', role: 'admin' };
const bob: Identity = { name: 'bob', role: 'viewer' };
const node: Identity = { name: 'system:node:pi-1', role: 'node', nodeName: 'pi-1' };

/** A request that runs until the test ends it. */
function held() {
  let end!: () => void;
  const done = new Promise<void>((r) => (end = r));
  return { work: () => done, end };
}

const flush = () => new Promise((r) => setImmediate(r));

describe('FlowControl', () => {
  it('runs as many requests as its level has seats, and serves waiting flows in turn', async () => {
    const fc = new FlowControl(CONFIG, new FakeClock());
    const order: string[] = [];
    const running = [held(), held()];
    const first = running.map((h) => fc.run(alice, h.work));
    // Alice queues three more, then Bob one: Bob's goes second, not fourth.
    const queued = ['a1', 'a2', 'a3'].map((n) => fc.run(alice, async () => void order.push(n)));
    const bobs = fc.run(bob, async () => void order.push('b1'));
    expect(fc.snapshot()['global-default']).toEqual({ executing: 2, queued: 4, seats: 2 });
    running[0].end();
    await first[0];
    await flush();
    running[1].end();
    await Promise.all([...first, ...queued, bobs]);
    expect(order).toEqual(['a1', 'b1', 'a2', 'a3']);
    expect(fc.snapshot()['global-default']).toEqual({ executing: 0, queued: 0, seats: 2 });
  });

  it('refuses with TooManyRequests and a retry hint when the queue is full, and counts it', async () => {
    const fc = new FlowControl(CONFIG, new FakeClock());
    const registry = new Registry();
    fc.registerMetrics(registry);
    const running = [held(), held()];
    const busy = running.map((h) => fc.run(alice, h.work));
    const waiting = Array.from({ length: 4 }, () => fc.run(alice, async () => 'ran'));
    const refused = await fc.run(alice, async () => 'ran').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).reason).toBe('TooManyRequests');
    expect((refused as ApiError).details.retryAfterSeconds).toBe(1);
    expect((refused as ApiError).message).toMatch(
      /priority level "global-default".*queue is full; nothing was done, so send the request again after 1 s/,
    );
    // An answer, not a fault: no stack frames were captured for it, and stacks elsewhere are intact.
    expect((refused as ApiError).stack?.split('\n').filter((l) => l.trim().startsWith('at '))).toEqual([]);
    expect(new Error('elsewhere').stack?.split('\n').length).toBeGreaterThan(1);
    const text = await registry.metrics();
    expect(text).toMatch(
      /apiserver_flowcontrol_rejected_requests_total\{priority_level="global-default",reason="queue-full"\} 1/,
    );
    expect(text).toMatch(
      /apiserver_flowcontrol_current_inqueue_requests\{priority_level="global-default"\} 4/,
    );
    for (const h of running) h.end();
    expect(await Promise.all([...busy, ...waiting])).toEqual([
      undefined,
      undefined,
      'ran',
      'ran',
      'ran',
      'ran',
    ]);
  });

  it('tells a refused client to come back when the queue ahead of it has likely drained', async () => {
    const clock = new FakeClock();
    const config = { ...CONFIG, 'global-default': { seats: 1, queueLength: 8, queueWaitMs: 60_000 } };
    const fc = new FlowControl(config, clock);
    const requests = Array.from({ length: 9 }, () => held());
    const runs = requests.map((h) => fc.run(alice, h.work));
    // The level finishes a request every 500 ms while the queue stays full: 2 a second.
    for (let i = 0; i < 4; i++) {
      clock.advance(500);
      requests[i].end();
      await runs[i];
      const more = held();
      requests.push(more);
      runs.push(fc.run(alice, more.work));
    }
    expect(fc.snapshot()['global-default']).toEqual({ executing: 1, queued: 8, seats: 1 });
    const refused = (await fc.run(alice, async () => 'ran').catch((e: unknown) => e)) as ApiError;
    // Eight waiting plus this one, at 2 a second: 5 s, not the 1 s a fixed hint would say.
    expect(refused.details.retryAfterSeconds).toBe(5);
    expect(refused.message).toMatch(/send the request again after 5 s/);
    for (const h of requests) h.end();
    await Promise.all(runs);
  });

  it("says in /metrics how long each level's requests ran once seated, apart from their wait", async () => {
    const clock = new FakeClock();
    const fc = new FlowControl(CONFIG, clock);
    const registry = new Registry();
    fc.registerMetrics(registry);
    const lease = held();
    const renewal = fc.run(node, lease.work, 'Lease');
    await flush();
    clock.advance(300);
    lease.end();
    await renewal;
    const text = await registry.metrics();
    expect(text).toMatch(
      /apiserver_flowcontrol_request_execution_seconds_bucket\{le="0.2",priority_level="node-high"\} 0/,
    );
    expect(text).toMatch(
      /apiserver_flowcontrol_request_execution_seconds_bucket\{le="0.5",priority_level="node-high"\} 1/,
    );
    expect(text).toMatch(
      /apiserver_flowcontrol_request_execution_seconds_sum\{priority_level="node-high"\} 0.3/,
    );
  });

  it('refuses a request that waited too long, and it never runs', async () => {
    const clock = new FakeClock();
    const fc = new FlowControl(CONFIG, clock);
    const running = [held(), held()];
    const busy = running.map((h) => fc.run(alice, h.work));
    let ran = false;
    const late = fc.run(bob, async () => void (ran = true)).catch((e: unknown) => e);
    clock.advance(10_000);
    const err = (await late) as ApiError;
    expect(err.reason).toBe('TooManyRequests');
    expect(err.message).toMatch(/no seat came free within 10 s/);
    expect(fc.snapshot()['global-default'].queued).toBe(0);
    for (const h of running) h.end();
    await Promise.all(busy);
    await flush();
    expect(ran).toBe(false);
  });

  it("gives a node's requests their own seats: a flood of people's requests does not hold them up", async () => {
    const fc = new FlowControl(CONFIG, new FakeClock());
    const running = [held(), held()];
    const busy = running.map((h) => fc.run(alice, h.work));
    const flood = Array.from({ length: 10 }, () => fc.run(alice, async () => 'ran').catch(() => 'refused'));
    // The user level is full and its queue too; the node's renewal runs at once.
    expect(await fc.run(node, async () => 'renewed', 'Lease')).toBe('renewed');
    for (const h of running) h.end();
    const outcomes = await Promise.all(flood);
    expect(outcomes.filter((o) => o === 'refused')).toHaveLength(6);
    await Promise.all(busy);
  });

  it("keeps a node's heartbeats (its Node, its Lease) apart from the rest of what it sends", async () => {
    const fc = new FlowControl(CONFIG, new FakeClock());
    // Pod status and events from a fleet starting its pods fill the system level and its queue.
    const running = [held(), held()];
    const busy = running.map((h) => fc.run(node, h.work, 'Pod'));
    const statuses = Array.from({ length: 6 }, () =>
      fc.run(node, async () => 'written', 'Pod').catch(() => 'refused'),
    );
    expect(fc.snapshot().system).toEqual({ executing: 2, queued: 4, seats: 2 });
    expect(await fc.run(node, async () => 'refused?', 'Event').catch(() => 'refused')).toBe('refused');
    // The lease renewal and the node status report run at once in node-high.
    expect(await fc.run(node, async () => 'renewed', 'Lease')).toBe('renewed');
    expect(await fc.run(node, async () => 'reported', 'Node')).toBe('reported');
    expect(fc.snapshot()['node-high']).toEqual({ executing: 0, queued: 0, seats: 2 });
    for (const h of running) h.end();
    expect((await Promise.all(statuses)).filter((o) => o === 'refused')).toHaveLength(2);
    await Promise.all(busy);
  });

  it('frees the seat of a request that failed', async () => {
    const fc = new FlowControl(CONFIG, new FakeClock());
    await expect(fc.run(alice, async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(fc.snapshot()['global-default']).toEqual({ executing: 0, queued: 0, seats: 2 });
  });

  it("gives up people's seats while the event loop lags, never the agents', and takes them back as it recovers", async () => {
    const config: FlowControlConfig = {
      ...CONFIG,
      'node-high': { seats: 16, queueLength: 4, queueWaitMs: 10_000 },
      'global-default': { seats: 16, queueLength: 64, queueWaitMs: 10_000, shedUnderLoad: true },
    };
    const fc = new FlowControl(config, new FakeClock());
    const registry = new Registry();
    fc.registerMetrics(registry);
    fc.onLoopDelay(250);
    fc.onLoopDelay(250);
    expect(fc.snapshot()['global-default'].seats).toBe(4);
    expect(fc.snapshot()['node-high'].seats).toBe(16);
    expect(await registry.metrics()).toMatch(
      /apiserver_flowcontrol_current_limit_seats\{priority_level="global-default"\} 4/,
    );

    // A flood of 10 gets 4 seats; the other 6 wait, and the agents' 16 seats are all there.
    const flood = Array.from({ length: 10 }, () => held());
    const runs = flood.map((h) => fc.run(alice, h.work));
    expect(fc.snapshot()['global-default']).toEqual({ executing: 4, queued: 6, seats: 4 });
    const renewals = Array.from({ length: 16 }, () => held());
    const renewing = renewals.map((h) => fc.run(node, h.work, 'Lease'));
    expect(fc.snapshot()['node-high']).toEqual({ executing: 16, queued: 0, seats: 16 });

    // The loop recovers: 2 seats back per quiet sample, handed to the waiting at once.
    fc.onLoopDelay(40);
    expect(fc.snapshot()['global-default'].executing).toBe(4);
    fc.onLoopDelay(10);
    expect(fc.snapshot()['global-default']).toEqual({ executing: 6, queued: 4, seats: 6 });
    for (let i = 0; i < 10; i++) fc.onLoopDelay(10);
    expect(fc.snapshot()['global-default']).toEqual({ executing: 10, queued: 0, seats: 16 });
    for (const h of [...flood, ...renewals]) h.end();
    await Promise.all([...runs, ...renewing]);
  });

  it("makes the agents' pod status and metrics give up seats while their heartbeats are slow, and take them back once quick", async () => {
    const clock = new FakeClock();
    const config: FlowControlConfig = {
      ...CONFIG,
      'node-high': { seats: 4, queueLength: 4, queueWaitMs: 10_000 },
      system: { seats: 16, queueLength: 64, queueWaitMs: 10_000, yieldsTo: 'node-high' },
    };
    const fc = new FlowControl(config, clock, clock);
    const renew = async (ms: number) => {
      const lease = held();
      const renewal = fc.run(node, lease.work, 'Lease');
      await flush();
      clock.advance(ms);
      lease.end();
      await renewal;
    };

    // Quick heartbeats, or none at all: the pod status writes keep every seat.
    await renew(20);
    fc.onLoopDelay(0);
    fc.onLoopDelay(0);
    expect(fc.snapshot().system.seats).toBe(16);

    // A renewal took 1.5 s from arrival to answer: system halves its seats, sample after sample.
    await renew(1_500);
    fc.onLoopDelay(0);
    expect(fc.snapshot().system.seats).toBe(8);
    // A renewal running, none finished in the sample (the loop is stuck): as slow, down to the
    // floor of an eighth.
    const stuck = held();
    const stuckRenewal = fc.run(node, stuck.work, 'Lease');
    fc.onLoopDelay(0);
    fc.onLoopDelay(0);
    fc.onLoopDelay(0);
    expect(fc.snapshot().system.seats).toBe(2);
    // Ten status writes share the 2 seats; the rest wait, none refused.
    const statuses = Array.from({ length: 10 }, () => held());
    const writing = statuses.map((h) => fc.run(node, h.work, 'Pod'));
    expect(fc.snapshot().system).toEqual({ executing: 2, queued: 8, seats: 2 });
    clock.advance(1_000);
    stuck.end();
    await stuckRenewal;
    fc.onLoopDelay(0);
    expect(fc.snapshot().system.seats).toBe(2);
    // A heartbeat refused (node-high's queue full) counts as slow too.
    const heartbeats = Array.from({ length: 8 }, () => held());
    const beating = heartbeats.map((h) => fc.run(node, h.work, 'Lease'));
    await expect(fc.run(node, async () => 'renewed', 'Lease')).rejects.toThrow(/priority level "node-high"/);
    for (const h of heartbeats) h.end();
    await Promise.all(beating);
    fc.onLoopDelay(0);
    expect(fc.snapshot().system.seats).toBe(2);

    // Heartbeats quick again: 2 seats back per sample, handed to the waiting writes at once.
    await renew(50);
    fc.onLoopDelay(0);
    expect(fc.snapshot().system).toEqual({ executing: 4, queued: 6, seats: 4 });
    // Neither quick nor slow: the seats stay.
    await renew(600);
    fc.onLoopDelay(0);
    expect(fc.snapshot().system.seats).toBe(4);
    for (let i = 0; i < 8; i++) fc.onLoopDelay(0);
    expect(fc.snapshot().system).toEqual({ executing: 10, queued: 0, seats: 16 });
    // The loop's delay alone does not move them: that is people's level's signal.
    fc.onLoopDelay(5_000);
    expect(fc.snapshot().system.seats).toBe(16);
    for (const h of statuses) h.end();
    await Promise.all(writing);
  });
});

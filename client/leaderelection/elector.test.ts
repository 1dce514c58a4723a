import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiError } from '../api/errors.js';
import type { Client } from '../client.js';
import { startTestApiServer, type TestApiServer } from '../../test/support/apiserver.js';
import { LeaderElector } from './elector.js';

let t: TestApiServer;
beforeEach(async () => {
  t = await startTestApiServer();
});
afterEach(async () => t.close());

/** A client that can be cut off from the server, as a candidate on a broken network is. */
function partitionable(client: Client): { client: Client; cut(): void } {
  let cut = false;
  const wrapped = new Proxy(client, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver);
      if (typeof v !== 'function') return v;
      return (...args: unknown[]) => {
        if (cut && prop !== 'close') return Promise.reject(new ApiError('Unavailable', 'network partition'));
        return (v as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { client: wrapped, cut: () => (cut = true) };
}

function candidate(identity: string, client: Client) {
  const log: string[] = [];
  const elector = new LeaderElector({
    client,
    name: 'controller-manager',
    identity,
    clock: t.clock,
    callbacks: {
      onStartedLeading: () => log.push('started'),
      onStoppedLeading: () => log.push('stopped'),
    },
  });
  return { elector, log };
}

/** Moves the fake clock in small steps, letting real I/O (the store, the watch) run between them. */
async function run(ms: number, check: () => void, stepMs = 100): Promise<void> {
  for (let done = 0; done < ms; done += stepMs) {
    t.clock.advance(stepMs);
    await new Promise((r) => setTimeout(r, 3));
    check();
  }
}

describe('leader election', () => {
  it('elects one leader, never two, and fails over after the leader stops renewing', async () => {
    const pa = partitionable(t.admin);
    const a = candidate('a', pa.client);
    const b = candidate('b', t.as({ name: 'b', role: 'admin' }));
    void a.elector.run();
    await run(500, () => undefined);
    void b.elector.run();
    const neverTwo = () => expect(a.elector.isLeader() && b.elector.isLeader()).toBe(false);
    await run(5_000, neverTwo);
    expect(a.elector.isLeader()).toBe(true);
    expect(b.elector.isLeader()).toBe(false);
    expect(b.elector.leader).toBe('a');

    // a loses the network: it must stop acting before b may start.
    pa.cut();
    const cutAt = t.clock.now();
    let aStoppedAt = 0;
    let bStartedAt = 0;
    await run(20_000, () => {
      neverTwo();
      if (!aStoppedAt && a.log.includes('stopped')) aStoppedAt = t.clock.now();
      if (!bStartedAt && b.elector.isLeader()) bStartedAt = t.clock.now();
    });
    expect(aStoppedAt - cutAt).toBeLessThanOrEqual(10_000);
    expect(bStartedAt).toBeGreaterThan(aStoppedAt);
    expect(bStartedAt - cutAt).toBeLessThanOrEqual(15_100);
    expect(
      (await t.admin.get('Lease', 'controller-manager', { namespace: 'kube-system' })).spec,
    ).toMatchObject({
      holderIdentity: 'b',
      leaseDurationSeconds: 15,
      leaseTransitions: 1,
    });
    await a.elector.stop();
    await b.elector.stop();
  });

  it('hands the lease over at once when the leader stops', async () => {
    const a = candidate('a', t.admin);
    const b = candidate('b', t.admin);
    void a.elector.run();
    await run(500, () => undefined);
    void b.elector.run();
    await run(1_000, () => undefined);
    expect(a.elector.isLeader()).toBe(true);
    await a.elector.stop();
    expect(a.log).toEqual(['started', 'stopped']);
    await run(3_000, () => undefined);
    expect(b.elector.isLeader()).toBe(true);
    await b.elector.stop();
  });
});

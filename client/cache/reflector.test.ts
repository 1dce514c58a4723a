import { afterEach, describe, expect, it } from 'vitest';
import type { Pod } from '../api/types.js';
import { startTestApiServer, type TestApiServer } from '../../test/support/apiserver.js';
import { Reflector, type ReflectorMetrics } from './reflector.js';

let t: TestApiServer | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

function counting(): ReflectorMetrics & { lists: number; watches: number; failures: string[] } {
  const m = {
    lists: 0,
    watches: 0,
    failures: [] as string[],
    listed: () => void m.lists++,
    watchStarted: () => void m.watches++,
    relisted: () => undefined,
    event: () => undefined,
    watchFailed: (_k: string, reason: string) => void m.failures.push(reason),
    resourceVersion: () => undefined,
  };
  return m;
}

function sink() {
  const seen: string[] = [];
  return {
    seen,
    store: {
      replace: (list: Pod[]) => void seen.push(`replace ${list.length}`),
      add: (p: Pod) => void seen.push(`add ${p.metadata?.name}`),
      update: (p: Pod) => void seen.push(`update ${p.metadata?.name}`),
      delete: (p: Pod) => void seen.push(`delete ${p.metadata?.name}`),
    },
  };
}

/** Moves the fake clock, letting the in-process server and the reflector run in between. */
async function advance(server: TestApiServer, ms: number, stepMs = 1000): Promise<void> {
  for (let done = 0; done < ms; done += stepMs) {
    server.clock.advance(Math.min(stepMs, ms - done));
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  }
}

const pod = (name: string): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { containers: [{ name: 'c', command: ['x'] }] },
});

describe('Reflector', () => {
  it('asks for a watch of 5 to 10 minutes and resumes, without listing again, when it ends', async () => {
    t = await startTestApiServer();
    const metrics = counting();
    const s = sink();
    const r = new Reflector({
      client: t.admin,
      kind: 'Pod',
      store: s.store,
      clock: t.clock,
      metrics,
      random: () => 0,
    });
    void r.run();
    await advance(t, 1000);
    expect(metrics).toMatchObject({ lists: 1, watches: 1 });
    await advance(t, 298_000);
    expect(metrics.watches).toBe(1);
    await advance(t, 3_000);
    expect(metrics).toMatchObject({ lists: 1, watches: 2 });
    await t.admin.create(pod('after'));
    await advance(t, 1000);
    expect(s.seen).toEqual(['replace 0', 'add after']);
    r.stop();
  });

  it('ends a watch that has been silent for too long and resumes from its last resourceVersion', async () => {
    // No bookmarks from this server: a quiet watch looks exactly like a dead one.
    t = await startTestApiServer({ bookmarkMs: 3_600_000 });
    await t.admin.create(pod('a'));
    const metrics = counting();
    const s = sink();
    const r = new Reflector({
      client: t.admin,
      kind: 'Pod',
      store: s.store,
      clock: t.clock,
      metrics,
      watchdogMs: 45_000,
      random: () => 0.5,
    });
    void r.run();
    await advance(t, 1000);
    expect(metrics.watches).toBe(1);
    await advance(t, 44_000);
    expect(metrics.failures).toEqual([]);
    await advance(t, 2_000);
    expect(metrics.failures).toEqual(['Timeout']);
    // The backoff (800 ms, jittered by up to 100%) passes, and it watches again — no relist.
    await advance(t, 2_000, 200);
    expect(metrics).toMatchObject({ lists: 1, watches: 2 });
    await t.admin.create(pod('b'));
    await advance(t, 1000);
    expect(s.seen).toEqual(['replace 1', 'add b']);
    r.stop();
  });

  it('keeps bookmarks flowing into its resourceVersion and the watchdog happy', async () => {
    t = await startTestApiServer({ bookmarkMs: 10_000 });
    const metrics = counting();
    const s = sink();
    const r = new Reflector({
      client: t.admin,
      kind: 'Pod',
      store: s.store,
      clock: t.clock,
      metrics,
      watchdogMs: 45_000,
      random: () => 0.99,
    });
    void r.run();
    await advance(t, 1000);
    const rv = r.lastSyncResourceVersion;
    // A change to another kind: only a BOOKMARK can carry its revision to this reflector.
    await t.admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'elsewhere' } });
    await advance(t, 2000);
    await advance(t, 200_000, 5_000);
    expect(metrics.failures).toEqual([]);
    expect(metrics.watches).toBe(1);
    expect(Number(r.lastSyncResourceVersion)).toBeGreaterThan(Number(rv));
    expect(s.seen).toEqual(['replace 0']);
    r.stop();
  });
});

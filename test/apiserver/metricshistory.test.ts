/**
 * A node's NodeMetrics history (what the GUI charts): every sample of the last 15 minutes, as
 * its agent wrote it, oldest first; gone with the NodeMetrics.
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import { ApiError } from '../../client/api/errors.js';
import { kindInfo } from '../../client/api/kinds.js';
import { FakeClock } from '../../client/util/clock.js';
import { NodeMetricsHistory } from '../../main/apiserver/metricshistory.js';
import { WatchCache, type CachedObject } from '../../main/apiserver/watchcache.js';
import type { KubeObject, NodeMetrics } from '../../client/api/types.js';
import { ADMIN, startTestApiServer, type TestApiServer } from '../support/apiserver.js';

let t: TestApiServer;
beforeEach(async () => {
  t = await startTestApiServer();
  await t.admin.create({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'pi-1' } });
});
afterEach(() => t.close());

const flush = () => new Promise((r) => setImmediate(r));

function sample(seconds: number, usage: Record<string, string>): KubeObject {
  return {
    apiVersion: 'metrics.k8s.io/v1beta1',
    kind: 'NodeMetrics',
    metadata: { name: 'pi-1' },
    timestamp: new Date(Date.parse('2026-11-29T10:00:00Z') + seconds * 1000)
      .toISOString()
      .replace('.000', ''),
    window: '10s',
    usage,
  } as NodeMetrics as KubeObject;
}

/** Reports every 10 s for `count` reports, as an agent does. */
async function report(count: number, usage: (i: number) => Record<string, string>): Promise<KubeObject[]> {
  const written: KubeObject[] = [];
  for (let i = 0; i < count; i++) {
    const m = sample(i * 10, usage(i));
    written.push(i === 0 ? await t.admin.create(m) : await t.admin.update(m));
    t.clock.advance(10_000);
  }
  await flush();
  return written;
}

it('gives back every sample as it was written, oldest first, whatever its usage names and values', async () => {
  const written = await report(5, (i) => ({
    cpu: `${100 + i}m`,
    memory: `${1_048_576 + i}Ki`,
    'kubelab.io/load1': i % 2 ? '0.5' : '1.25',
    ...(i === 3 ? { 'kubelab.io/processes': '0213' } : {}),
  }));
  const history = await t.api.nodeMetricsHistory(ADMIN, 'pi-1');
  expect(history).toEqual(written);
  expect(history.map((m) => m.metadata?.resourceVersion)).toEqual(
    written.map((m) => m.metadata?.resourceVersion),
  );
  expect((history[3] as NodeMetrics).usage?.['kubelab.io/processes']).toBe('0213');
  expect(history[0].metadata?.managedFields).toBeUndefined();
});

it('keeps 15 minutes of samples', async () => {
  await report(100, (i) => ({ cpu: `${i}m` }));
  const history = (await t.api.nodeMetricsHistory(ADMIN, 'pi-1')) as NodeMetrics[];
  // Written every 10 s for 1,000 s: the last 900 s of them.
  expect(history.length).toBe(90);
  expect(history[0].usage?.cpu).toBe('10m');
  expect(history.at(-1)?.usage?.cpu).toBe('99m');
});

it('forgets a node’s samples with its NodeMetrics, and starts again with a new one', async () => {
  await report(3, (i) => ({ cpu: `${i}m` }));
  await t.admin.delete('NodeMetrics', 'pi-1');
  await flush();
  const gone = await t.api.nodeMetricsHistory(ADMIN, 'pi-1').catch((e: unknown) => e);
  expect((gone as ApiError).reason).toBe('NotFound');
  const again = await t.admin.create(sample(100, { cpu: '7m' }));
  await flush();
  expect(await t.api.nodeMetricsHistory(ADMIN, 'pi-1')).toEqual([again]);
});

it('keeps recording after its watch cache is rebuilt from the store, without repeating a sample, and drops a node gone meanwhile', async () => {
  const clock = new FakeClock(0);
  const cache = new WatchCache(kindInfo('NodeMetrics'), () => undefined, {
    historyMs: 60_000,
    historyMax: 100,
    now: () => clock.now(),
  });
  cache.reset([], 1);
  const history = new NodeMetricsHistory(clock);
  history.follow(cache);
  const version = (name: string, rv: number, cpu: string): CachedObject => ({
    key: `/registry/nodemetrics/${name}`,
    rv,
    object: {
      ...sample(rv, { cpu }),
      metadata: { name, uid: `uid-${name}`, resourceVersion: String(rv) },
    },
  });
  const a2 = version('a', 2, '1m');
  const b3 = version('b', 3, '9m');
  cache.apply([
    { type: 'ADDED', rv: 2, cur: a2, at: 0 },
    { type: 'ADDED', rv: 3, cur: b3, at: 0 },
  ]);
  await flush();
  // Rebuilt from a store in which b is gone: its watchers are ended, and followed again.
  cache.reset([a2], 4);
  await flush();
  cache.apply([{ type: 'MODIFIED', rv: 5, cur: version('a', 5, '2m'), prev: a2, at: 0 }]);
  await flush();
  expect(history.samples('a')?.map((m) => (m as NodeMetrics).usage?.cpu)).toEqual(['1m', '2m']);
  expect(history.samples('b')).toBeUndefined();
  history.stop();
});

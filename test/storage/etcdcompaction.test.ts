/**
 * A control plane started with `--store etcd` compacts etcd's history on its own (issue 19):
 * etcd does not by default, and its database would grow until writes fail with NOSPACE.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { FakeClock } from '../../client/util/clock.js';
import { openEtcdStorage, type EtcdStorage } from '../../main/storage/etcd.js';
import { isStorageError } from '../../main/storage/types.js';
import { startTestControlPlane } from '../support/controlplane.js';
import { startEtcd, type EtcdServer } from '../support/etcd.js';

let etcd: EtcdServer;
beforeAll(async () => {
  etcd = await startEtcd();
});
afterAll(async () => {
  await etcd?.stop();
});

describe('a control plane on etcd', () => {
  it('compacts etcd every 5 minutes, logs and counts it, and stops when it stops', async () => {
    const clock = new FakeClock();
    const lines: Array<Record<string, unknown>> = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const t = await startTestControlPlane({
      store: 'etcd',
      etcdEndpoints: [etcd.endpoint],
      etcdPrefix: '/compaction',
      controllers: false,
      clock,
      logger,
    });
    // An observer with no compactor of its own.
    const observer = await openEtcdStorage({
      endpoints: [etcd.endpoint],
      prefix: '/compaction',
      compactionIntervalMs: 0,
    });
    const compactions = () => lines.filter((l) => l.msg === "compacted etcd's history");
    const round = async () => {
      clock.advance(5 * 60_000);
      await (t.cp.storage as EtcdStorage).compaction?.idle();
    };
    try {
      // The first turn is taken at start: it notes where history starts.
      await (t.cp.storage as EtcdStorage).compaction?.idle();
      const c = t.client();
      const ns = await c.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'lab' } });
      const early = Number(ns.metadata!.resourceVersion);
      await round(); // compacts to the start, notes the revision of now
      expect(await observer.compactedRevision()).toBeLessThan(early);
      const noted = await observer.currentRevision();
      await c.patch('Namespace', 'lab', { metadata: { labels: { a: 'b' } } });
      await round(); // compacts to the revision the previous round saw
      const compacted = await observer.compactedRevision();
      expect(compacted).toBeGreaterThan(early);
      expect(compacted).toBeLessThanOrEqual(noted);
      await expect(observer.list('/', { revision: early })).rejects.toSatisfy((err) =>
        isStorageError(err, 'Compacted'),
      );
      expect(compactions()).toHaveLength(2);
      expect(compactions()[1]).toMatchObject({ component: 'etcd-compactor', revision: compacted });
      expect(await t.cp.metrics.metrics()).toContain('kubelab_etcd_compactions_total{result="succeeded"} 2');
      // Objects are all still there; only their history is gone.
      expect((await c.get('Namespace', 'lab')).metadata?.labels).toEqual({ a: 'b' });
    } finally {
      await t.close();
    }
    try {
      const after = await observer.currentRevision();
      clock.advance(20 * 60_000);
      // Stopped with the control plane: no round takes a turn (a write) any more.
      expect(await observer.currentRevision()).toBe(after);
      expect(compactions()).toHaveLength(2);
    } finally {
      await observer.close();
    }
  });
});

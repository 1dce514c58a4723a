import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { storageConformance } from '../../test/storage/conformance.js';
import { openSqliteStorage, type SqliteStorage } from './sqlite.js';
import { isStorageError } from './types.js';

function tempDb(): { path: string; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'kubelab-sqlite-'));
  return { dir, path: join(dir, 'state.db') };
}

storageConformance('sqlite', async () => {
  const { dir, path } = tempDb();
  let storage = await openSqliteStorage({ path, compactIntervalMs: 0 });
  return {
    get storage() {
      return storage;
    },
    async restart() {
      await storage.close();
      storage = await openSqliteStorage({ path, compactIntervalMs: 0 });
      return storage;
    },
    async cleanup() {
      await storage.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

describe('sqlite storage', () => {
  it('groups concurrent writes into few transactions and acknowledges each after commit', async () => {
    const { dir, path } = tempDb();
    const s = await openSqliteStorage({ path, compactIntervalMs: 0 });
    try {
      const before = (await s.stats()).rows;
      const results = await Promise.all(Array.from({ length: 500 }, (_, i) => s.create(`/g/${i}`, 'x')));
      expect(new Set(results.map((r) => r.modRevision)).size).toBe(500);
      expect((await s.stats()).rows - before).toBe(500);
      // Another connection (after close) sees every acknowledged write.
      await s.close();
      const again = await openSqliteStorage({ path, compactIntervalMs: 0 });
      expect((await again.list('/g/')).items).toHaveLength(500);
      await again.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('keeps the file bounded under lease-style churn when history is compacted on the timer', async () => {
    const { dir, path } = tempDb();
    let clock = 0;
    const s = await openSqliteStorage({ path, compactIntervalMs: 0, retentionMs: 1000, now: () => clock });
    const compactNow = (s as unknown as { compactOnTimer(): void }).compactOnTimer.bind(s);
    try {
      const revs = new Map<string, number>();
      for (let i = 0; i < 100; i++)
        revs.set(`/leases/n${i}`, (await s.create(`/leases/n${i}`, 'x'.repeat(300))).modRevision);
      const renewAll = async () => {
        await Promise.all(
          [...revs].map(async ([k, rev]) =>
            revs.set(k, (await s.update(k, 'y'.repeat(300), rev)).modRevision),
          ),
        );
      };
      let sizeAfterFirstRounds = 0;
      for (let round = 0; round < 60; round++) {
        await renewAll();
        clock += 500;
        compactNow();
        await new Promise((r) => setTimeout(r, 0));
        await (s as unknown as { compacting: Promise<void> }).compacting;
        if (round === 10) sizeAfterFirstRounds = (await s.stats()).pageCount;
      }
      const stats = await s.stats();
      // Only the rows within the retention window survive: ~2-3 rounds of 100 keys.
      expect(stats.rows).toBeLessThan(500);
      expect(stats.pageCount).toBeLessThanOrEqual(sizeAfterFirstRounds + 10);
      expect(statSync(path + '-wal', { throwIfNoEntry: false })?.size ?? 0).toBeLessThan(8 * 1024 * 1024);
      expect(await s.compactedRevision()).toBeGreaterThan(0);
    } finally {
      await s.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a second server on the same file with an actionable message', async () => {
    const { dir, path } = tempDb();
    const s = await openSqliteStorage({ path, compactIntervalMs: 0 });
    await s.create('/a', 'b');
    try {
      await expect(openSqliteStorage({ path, compactIntervalMs: 0 })).rejects.toThrow(
        /in use by another kubelab server/,
      );
    } finally {
      await s.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('fails a watcher whose replay is overtaken by compaction instead of skipping events', async () => {
    const { dir, path } = tempDb();
    const s: SqliteStorage = await openSqliteStorage({ path, compactIntervalMs: 0 });
    try {
      let rev = (await s.create('/o/k', '0')).modRevision;
      const from = rev;
      for (let i = 0; i < 5000; i++) rev = (await s.update('/o/k', String(i), rev)).modRevision;
      const errors: unknown[] = [];
      let seen = 0;
      s.watch('/o/', from, { onEvents: (e) => (seen += e.length), onError: (e) => errors.push(e) });
      await s.compact(rev);
      await new Promise((r) => setTimeout(r, 50));
      expect(errors).toHaveLength(1);
      expect(isStorageError(errors[0], 'Compacted')).toBe(true);
      expect(seen).toBeLessThan(5000);
    } finally {
      await s.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

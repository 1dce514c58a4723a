/** Lists and watches are served from the watch cache, not the store. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import type { Pod } from '../../client/api/types.js';
import { openSqliteStorage } from '../../main/storage/sqlite.js';
import type { Storage } from '../../main/storage/types.js';
import { startTestApiServer } from '../support/apiserver.js';

it('answers List and Watch from memory once the cache is filled', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kubelab-wc-'));
  const real = await openSqliteStorage({ path: join(dir, 'state.db'), compactIntervalMs: 0 });
  const reads = { list: 0, watch: 0 };
  const spy: Storage = new Proxy(real, {
    get(target, prop, receiver) {
      if (prop === 'list') reads.list++;
      if (prop === 'watch') reads.watch++;
      const v = Reflect.get(target, prop, receiver);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
  const t = await startTestApiServer({ storage: spy });
  try {
    for (let i = 0; i < 20; i++) {
      await t.admin.create<Pod>({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: `p${i}` },
        spec: { containers: [{ name: 'c', command: ['x'] }] },
      });
    }
    const before = { ...reads };
    for (let i = 0; i < 10; i++) {
      expect((await t.admin.list('Pod', { labelSelector: '' })).items).toHaveLength(20);
      expect((await t.admin.list('Pod', { limit: 5 })).items).toHaveLength(5);
      const w = await t.admin.watch('Pod');
      w.stop();
    }
    expect(reads).toEqual(before);
  } finally {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

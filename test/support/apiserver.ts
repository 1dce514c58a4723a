/** An apiserver on a real SQLite file in a temp folder, for tests. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Identity } from '../../client/api/local.js';
import { inProcessClient } from '../../client/inprocess.js';
import type { Client } from '../../client/client.js';
import { FakeClock } from '../../client/util/clock.js';
import { ApiServer, type ApiServerOptions } from '../../main/apiserver/apiserver.js';
import { silentLogger } from '../../main/logging.js';
import { openSqliteStorage } from '../../main/storage/sqlite.js';
import type { Storage } from '../../main/storage/types.js';

export const ADMIN: Identity = { name: 'admin', role: 'admin' };
export const VIEWER: Identity = { name: 'viewer', role: 'viewer' };

export interface TestApiServer {
  api: ApiServer;
  storage: Storage;
  clock: FakeClock;
  admin: Client;
  as(id: Identity): Client;
  dir: string;
  close(): Promise<void>;
}

export async function startTestApiServer(
  options: Partial<ApiServerOptions> & { storage?: Storage } = {},
): Promise<TestApiServer> {
  const dir = mkdtempSync(join(tmpdir(), 'kubelab-api-'));
  const storage: Storage =
    options.storage ?? (await openSqliteStorage({ path: join(dir, 'state.db'), compactIntervalMs: 0 }));
  const clock = new FakeClock(Date.parse('2026-11-29T10:00:00Z'));
  const memoryStorage = await openSqliteStorage({ path: ':memory:', compactIntervalMs: 0 });
  const api = new ApiServer({ clock, logger: silentLogger(), memoryStorage, ...options, storage });
  await api.start();
  return {
    api,
    storage,
    clock,
    dir,
    admin: inProcessClient(api, ADMIN),
    as: (id) => inProcessClient(api, id),
    async close() {
      api.stop();
      await storage.close();
      await memoryStorage.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

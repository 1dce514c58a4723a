/**
 * The control plane as one composable object: store, apiserver, gRPC server (and, as they
 * arrive, controllers). The desktop app and `kubelab server` both start exactly this.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Identity } from '../client/api/local.js';
import type { Client } from '../client/client.js';
import { inProcessClient } from '../client/inprocess.js';
import { realClock, type Clock } from '../client/util/clock.js';
import { ApiServer } from './apiserver/apiserver.js';
import { ensurePki, type Pki } from './grpc/pki.js';
import { startGrpcServer, type RunningGrpcServer } from './grpc/server.js';
import { TokenStore } from './grpc/tokens.js';
import { createLogger, type Logger } from './logging.js';
import { openSqliteStorage } from './storage/sqlite.js';
import type { Storage } from './storage/types.js';

export interface ControlPlaneOptions {
  dataDir: string;
  /** host:port for gRPC (default 0.0.0.0:6443; port 0 picks a free one). */
  listen?: string;
  store?: 'sqlite' | 'etcd';
  etcdEndpoints?: string[];
  etcdPrefix?: string;
  /** No TLS; allowed on a loopback address only. */
  plaintext?: boolean;
  /** Extra names or addresses for the serving certificate. */
  tlsSans?: string[];
  clock?: Clock;
  logger?: Logger;
  bookmarkMs?: number;
  historyMs?: number;
  /** sqlite: how long history is kept for resuming watchers (default 5 min). */
  retentionMs?: number;
}

export const SYSTEM_IDENTITY: Identity = { name: 'system:kube-controller-manager', role: 'admin' };

export class ControlPlane {
  private stopping: Promise<void> | undefined;

  private constructor(
    readonly options: ControlPlaneOptions,
    readonly storage: Storage,
    readonly api: ApiServer,
    readonly tokens: TokenStore,
    readonly grpc: RunningGrpcServer,
    readonly pki: Pki | undefined,
    readonly adminToken: string,
    readonly logger: Logger,
  ) {}

  static async start(options: ControlPlaneOptions): Promise<ControlPlane> {
    const logger = options.logger ?? createLogger();
    const clock = options.clock ?? realClock;
    mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
    const storage = await openStorage(options, clock);
    let api: ApiServer | undefined;
    try {
      api = new ApiServer({
        storage,
        clock,
        logger: logger.child({ component: 'apiserver' }),
        bookmarkMs: options.bookmarkMs,
        historyMs: options.historyMs,
      });
      await api.start();
      const tokens = new TokenStore(options.dataDir, clock);
      const adminToken = tokens.ensureAdminToken();
      const pki = options.plaintext ? undefined : await ensurePki(options.dataDir, options.tlsSans);
      const grpc = await startGrpcServer({
        api,
        tokens,
        listen: options.listen ?? '0.0.0.0:6443',
        tls: pki ? { certPem: pki.certPem, keyPem: pki.keyPem } : undefined,
        logger: logger.child({ component: 'grpc' }),
      });
      return new ControlPlane(options, storage, api, tokens, grpc, pki, adminToken, logger);
    } catch (err) {
      api?.stop();
      await storage.close();
      throw err;
    }
  }

  /** An in-process client (controllers, the desktop bridge): same checks as a remote call. */
  client(identity: Identity = SYSTEM_IDENTITY): Client {
    return inProcessClient(this.api, identity);
  }

  get port(): number {
    return this.grpc.port;
  }

  /** Stops serving, ends watches, and closes the store after every accepted write is committed. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      const closing = this.grpc.close();
      this.api.stop();
      await closing;
      await this.storage.close();
    })();
    return this.stopping;
  }
}

async function openStorage(options: ControlPlaneOptions, clock: Clock): Promise<Storage> {
  if ((options.store ?? 'sqlite') === 'sqlite') {
    return openSqliteStorage({
      path: join(options.dataDir, 'state.db'),
      retentionMs: options.retentionMs,
      now: () => clock.now(),
    });
  }
  const endpoints = options.etcdEndpoints ?? [];
  if (!endpoints.length) throw new Error('--store etcd needs --etcd-endpoints (e.g. http://127.0.0.1:2379)');
  const { openEtcdStorage } = await import('./storage/etcd.js');
  return openEtcdStorage({ endpoints, prefix: options.etcdPrefix });
}

/**
 * The control plane as one composable object: store, apiserver, gRPC server (and, as they
 * arrive, controllers). The desktop app and `kubelab server` both start exactly this.
 */
import { mkdirSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import type { Identity } from '../client/api/local.js';
import type { Client } from '../client/client.js';
import { inProcessClient } from '../client/inprocess.js';
import { realClock, type Clock } from '../client/util/clock.js';
import { CONTROLLER_MANAGER_USER, type FlowControlConfig } from './apiserver/flowcontrol/levels.js';
import { admittedApi } from './apiserver/flowcontrol/inprocess.js';
import { ApiServer } from './apiserver/apiserver.js';
import { APISERVER_IDENTITY } from './apiserver/auth.js';
import { syncKubernetesService } from './controllers/kubernetesservice/sync.js';
import { ControllerManager } from './controllers/manager.js';
import type { ControllerConfig } from './controllers/types.js';
import { startMetricsServer, type MetricsServer } from './metrics.js';
import { NodeCredentialRevoker } from './nodecredentials.js';
import { ensurePki, type Pki } from './grpc/pki.js';
import type { ServerLimits } from './grpc/limits.js';
import { splitHostPort, startGrpcServer, type RunningGrpcServer } from './grpc/server.js';
import { writeServerRecord } from './serverrecord.js';
import { restHandler } from './rest/handler.js';
import { defaultAgentDir } from './rest/install.js';
import { restDoor } from './rest/server.js';
import { TokenStore } from './grpc/tokens.js';
import { TunnelRegistry } from './grpc/tunnel.js';
import { createLogger, type Logger } from './logging.js';
import { openSqliteStorage } from './storage/sqlite.js';
import type { Storage } from './storage/types.js';
import { isHeartbeatKey, REGISTRY_PREFIX } from './apiserver/codec.js';
import { encryptedStorage } from './storage/encrypted.js';
import { IngressBrake } from './grpc/ingressbrake.js';
import { LoopDelaySampler } from './apiserver/flowcontrol/shedding.js';
import { loadOrCreateKeys, ValueEncryption } from './storage/encryption.js';

/** Where Secrets' encryption keys live in the data folder. */
export const ENCRYPTION_KEY_FILE = 'secrets-encryption.key';
const SECRETS_PREFIX = `${REGISTRY_PREFIX}secrets/`;

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
  /** How long Events live (Kubernetes' --event-ttl; default 1 hour). */
  eventTtlMs?: number;
  /** sqlite: how long history is kept for resuming watchers (default 5 min). */
  retentionMs?: number;
  /**
   * Controllers to run in-process, like --controllers ("*" = the defaults, "-gc" to drop one);
   * false runs none (a separate `kubelab controller-manager` does the work).
   */
  controllers?: string[] | false;
  /** Controller settings (periods, rates, thresholds); Kubernetes' defaults otherwise. */
  controllerConfig?: ControllerConfig;
  /** Serve Prometheus metrics on this host:port (kubelab server: 127.0.0.1:6445). */
  metricsListen?: string;
  /** Identity for leader election (default hostname_pid); used with the etcd store. */
  identity?: string;
  /** Per log stream: bytes a slow reader may leave unread before its stream is stopped (default 4 MiB). */
  logStreamBufferBytes?: number;
  /**
   * Per watch: bytes of events a client that stopped reading may leave unsent (beyond its
   * initial events) before its watch is ended (default 64 MiB).
   */
  watchBufferBytes?: number;
  /** What one gRPC client may hold: connections, streams, turns at large lists (grpc/limits.ts). */
  serverLimits?: Partial<ServerLimits>;
  /** Seats and queues of the requests' priority levels (apiserver/flowcontrol/levels.ts). */
  flowControl?: FlowControlConfig;
  /**
   * The keys Secrets are encrypted with at rest (default <dataDir>/secrets-encryption.key,
   * created on first start). Replicas sharing an etcd must share this file.
   */
  encryptionKeyFile?: string;
  /** Where the agent executables and install scripts are served from (default: dist/agent of the package). */
  agentDir?: string;
}

export const SYSTEM_IDENTITY: Identity = { name: CONTROLLER_MANAGER_USER, role: 'admin' };

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
    readonly metrics: Registry,
    readonly controllerManager: ControllerManager | undefined,
    private readonly metricsServer: MetricsServer | undefined,
    private readonly memoryStorage: Storage,
    private readonly revoker: NodeCredentialRevoker,
    /** The agents' tunnels: how pods/log reaches the nodes. */
    readonly tunnels: TunnelRegistry,
    /** Feeds the event loop's delay to the priority levels that shed load (flowcontrol/shedding.ts). */
    private readonly loopDelay: LoopDelaySampler,
  ) {}

  static async start(options: ControlPlaneOptions): Promise<ControlPlane> {
    const logger = options.logger ?? createLogger();
    const clock = options.clock ?? realClock;
    mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
    // Secrets are encrypted before they reach either store.
    const keys = loadOrCreateKeys(options.encryptionKeyFile ?? join(options.dataDir, ENCRYPTION_KEY_FILE));
    const storage = encryptedStorage(
      await openStorage(options, clock, logger),
      new ValueEncryption(keys),
      SECRETS_PREFIX,
      logger.child({ component: 'storage' }),
    );
    const memoryStorage = await openMemoryStorage(clock);
    let api: ApiServer | undefined;
    const tunnels = new TunnelRegistry({
      logger: logger.child({ component: 'tunnels' }),
      maxBufferedBytesPerStream: options.logStreamBufferBytes,
    });
    try {
      api = new ApiServer({
        memoryStorage,
        storage,
        clock,
        logger: logger.child({ component: 'apiserver' }),
        bookmarkMs: options.bookmarkMs,
        historyMs: options.historyMs,
        eventTtlMs: options.eventTtlMs,
        logTunnels: tunnels,
        flowControl: options.flowControl,
      });
      await api.start();
      const tokens = new TokenStore(options.dataDir, clock);
      const adminToken = tokens.ensureAdminToken();
      const pki = options.plaintext ? undefined : await ensurePki(options.dataDir, options.tlsSans);
      let apiAddress = '';
      const brake = new IngressBrake(clock, logger.child({ component: 'brake' }));
      const rest = restDoor(
        restHandler({
          api,
          tokens,
          logger: logger.child({ component: 'rest' }),
          serverAddress: () => apiAddress,
          watchBufferBytes: options.watchBufferBytes,
          clock,
          brake,
          install: { caPem: pki?.caPem, agentDir: options.agentDir ?? defaultAgentDir() },
        }),
      );
      const grpc = await startGrpcServer({
        api,
        tokens,
        listen: options.listen ?? '0.0.0.0:6443',
        tls: pki ? { certPem: pki.certPem, keyPem: pki.keyPem } : undefined,
        pki,
        tunnels,
        logger: logger.child({ component: 'grpc' }),
        watchBufferBytes: options.watchBufferBytes,
        limits: options.serverLimits,
        clock,
        rest,
        brake,
      });
      apiAddress = grpc.address;
      const metrics = new Registry();
      collectDefaultMetrics({ register: metrics });
      storage.registerMetrics?.(metrics);
      api.flowControl.registerMetrics(metrics);
      new Gauge({
        name: 'kubelab_apiserver_braked_connections',
        help: "Connections whose requests' bodies are held back for now (HTTP/2 stream window 0) because their requests kept being refused (ingressbrake.ts)",
        registers: [metrics],
        collect() {
          this.set(brake.braked);
        },
      });
      new Gauge({
        name: 'kubelab_agent_tunnels',
        help: 'Agents with a live tunnel to this control plane (pods/log reaches their nodes)',
        registers: [metrics],
        collect() {
          this.set(tunnels.nodes().length);
        },
      });
      new Gauge({
        name: 'kubelab_log_stream_buffered_bytes',
        help: 'Log bytes handed to readers and not yet taken: what slow readers hold on this server',
        registers: [metrics],
        collect() {
          this.set(tunnels.bufferedBytes);
        },
      });
      // The API's own Service (what `kubectl cluster-info` finds); a failure costs only that.
      await syncKubernetesService(inProcessClient(api, APISERVER_IDENTITY), grpc.port, logger).catch(
        (err: unknown) =>
          logger.warn(
            { err: err instanceof Error ? err.message : String(err) },
            'could not write the Service default/kubernetes; kubectl cluster-info will not list the API until the next start',
          ),
      );
      let controllerManager: ControllerManager | undefined;
      if (options.controllers !== false) {
        const store = options.store ?? 'sqlite';
        controllerManager = new ControllerManager({
          // Through flow control (workload-high), as kube-controller-manager's calls are.
          client: inProcessClient(admittedApi(api, api.flowControl), SYSTEM_IDENTITY),
          logger: logger.child({ component: 'controller-manager' }),
          clock,
          controllers: options.controllers,
          config: options.controllerConfig,
          metrics,
          // Several control planes may share one etcd: only the lease holder runs controllers.
          leaderElection:
            store === 'etcd' ? { identity: options.identity ?? `${hostname()}_${process.pid}` } : undefined,
        });
        await controllerManager.start();
      }
      const metricsServer = options.metricsListen
        ? await startMetricsServer(metrics, options.metricsListen)
        : undefined;
      const revoker = new NodeCredentialRevoker(inProcessClient(api, SYSTEM_IDENTITY), tokens, clock, logger);
      await revoker.start();
      // Replicas sharing the data folder: their deletions end this server's streams too.
      tokens.startWatchingFiles(realClock);
      const { host } = splitHostPort(options.listen ?? '0.0.0.0:6443');
      writeServerRecord(options.dataDir, {
        listen: `${host.includes(':') ? `[${host}]` : host}:${grpc.port}`,
        tls: Boolean(pki),
        pid: process.pid,
        startedAt: new Date(clock.now()).toISOString(),
      });
      // The loop's delay is real time whatever clock the control plane keeps.
      const { flowControl } = api;
      const loopDelay = new LoopDelaySampler(realClock, (p99Ms) => flowControl.onLoopDelay(p99Ms));
      loopDelay.start();
      return new ControlPlane(
        options,
        storage,
        api,
        tokens,
        grpc,
        pki,
        adminToken,
        logger,
        metrics,
        controllerManager,
        metricsServer,
        memoryStorage,
        revoker,
        tunnels,
        loopDelay,
      );
    } catch (err) {
      api?.stop();
      await storage.close();
      await memoryStorage.close();
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

  /** Where /metrics is served, if anywhere. */
  get metricsPort(): number | undefined {
    return this.metricsServer?.port;
  }

  /** Stops serving, ends watches, and closes the store after every accepted write is committed. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.revoker.stop();
      this.loopDelay.stop();
      this.tokens.stopWatchingFiles();
      await this.controllerManager?.stop();
      await this.metricsServer?.close();
      const closing = this.grpc.close();
      // Tunnels never end by themselves: end them so the shutdown need not wait out its grace.
      this.tunnels.close();
      this.api.stop();
      await closing;
      await this.storage.close();
      await this.memoryStorage.close();
    })();
    return this.stopping;
  }
}

/**
 * The in-memory store for kinds that are never persisted. Its history serves what a store's
 * history serves (a paginated list's later pages); the GUI's 15 minutes of NodeMetrics are
 * kept apart, compactly (apiserver/metricshistory.ts).
 */
export function openMemoryStorage(clock: Clock): Promise<Storage> {
  return openSqliteStorage({
    path: ':memory:',
    retentionMs: 90_000,
    compactIntervalMs: 30_000,
    now: () => clock.now(),
  });
}

async function openStorage(options: ControlPlaneOptions, clock: Clock, logger: Logger): Promise<Storage> {
  if ((options.store ?? 'sqlite') === 'sqlite') {
    return openSqliteStorage({
      path: join(options.dataDir, 'state.db'),
      retentionMs: options.retentionMs,
      firstInLine: isHeartbeatKey,
      now: () => clock.now(),
      logger: logger.child({ component: 'storage' }),
    });
  }
  const endpoints = options.etcdEndpoints ?? [];
  if (!endpoints.length) throw new Error('--store etcd needs --etcd-endpoints (e.g. http://127.0.0.1:2379)');
  const { openEtcdStorage } = await import('./storage/etcd.js');
  // The store compacts etcd's history every 5 minutes, as kube-apiserver does (replicas take
  // turns); closing the store stops it.
  return openEtcdStorage({
    endpoints,
    prefix: options.etcdPrefix,
    clock,
    logger: logger.child({ component: 'etcd-compactor' }),
  });
}

/**
 * The etcd backend of the storage interface (DESIGN.md §4): etcd's mod_revision is the
 * resourceVersion, etcd's watch feeds the watch cache, etcd's compaction gives 'Compacted'.
 *
 * Unary calls go through the `etcd3` client with its retries and circuit breaker replaced
 * (its defaults replay non-idempotent transactions and trip for 5 s on one oversized
 * response). Watches use a raw grpc-js stream on the rpc.proto that etcd3 ships, because
 * etcd3's watcher hides compact_revision and cannot send progress requests.
 *
 * History is compacted every 5 minutes as kube-apiserver does it (etcdcompactor.ts), with
 * several replicas taking turns.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import type { Registry } from 'prom-client';
import {
  ClientClosedError,
  CompareResult,
  CompareTarget,
  Etcd3,
  GRPCDeadlineExceededError,
  GRPCResourceExhastedError,
  GRPCUnavailableError,
  type ICompare,
  type IKeyValue,
  type IOptions,
  type IRangeRequest,
  type IRangeResponse,
  type IRequestOp,
  type ITxnResponse,
} from 'etcd3';
import { realClock, type Clock } from '../../client/util/clock.js';
import type { Logger } from '../logging.js';
import {
  COMPACT_REV_KEY,
  DEFAULT_COMPACTION_INTERVAL_MS,
  COMPACT_SAMPLES_KEY,
  COMPACT_TIME_KEY,
  formatSamples,
  parseSamples,
  EtcdCompactor,
  type CompactionBackend,
  type CompactionClaim,
  type CompactionMark,
} from './etcdcompactor.js';
import type { HistoryBound, RetentionSample } from './retention.js';
import {
  StorageError,
  type KeyValue,
  type ListOptions,
  type ListResult,
  type Storage,
  type StorageEvent,
  type WatchCallbacks,
  type WatchHandle,
} from './types.js';

export interface EtcdStorageOptions {
  /** Client URLs of the etcd members, e.g. ['http://127.0.0.1:2379']; all http or all https. */
  endpoints: string[];
  /**
   * Every key is stored under this prefix (default '/kubelab'); the interface never sees it.
   * Byte-wise prefixes: '/kubelab' also covers '/kubelab2/...', so tenants need prefixes that
   * do not start with one another.
   */
  prefix?: string;
  /** For https endpoints: PEM contents (not paths). Without `ca` the system roots are used. */
  tls?: { ca?: string | Buffer; cert?: string | Buffer; key?: string | Buffer; serverName?: string };
  /** Deadline of each unary call (default 10 s). */
  requestTimeoutMs?: number;
  /** How long `openEtcdStorage` waits for etcd to answer (default 5 s). */
  connectTimeoutMs?: number;
  /** Largest gRPC message accepted from etcd (default 64 MiB); lists are paged well below it. */
  maxReceiveMessageBytes?: number;
  /**
   * How often a watch with an `onProgress` callback asks etcd for progress (default 1 s).
   * Only used with etcd versions whose requested progress is ordered with the events
   * (3.4.31+, 3.5.13+, 3.6+); older servers report progress only at their
   * `--experimental-watch-progress-notify-interval` (10 min unless set).
   */
  progressIntervalMs?: number;
  /**
   * How often etcd's history is compacted, to the revision of the previous round (default
   * 5 minutes, kube-apiserver's --etcd-compaction-interval; 0: never, the operator compacts).
   */
  compactionIntervalMs?: number;
  /** Under heavy writing, less history is kept (retention.ts; default DEFAULT_HISTORY_BOUND). */
  historyBound?: HistoryBound;
  /** The compaction timer's clock; tests move it. */
  clock?: Clock;
  /** Where compactions and their failures are logged. */
  logger?: Logger;
}

const DEFAULT_PREFIX = '/kubelab';
const FIRST_PAGE_KEYS = 500;
const MAX_PAGE_KEYS = 10_000;
/** Aim each range page at this many bytes: far from grpc and etcd limits, few round trips. */
const TARGET_PAGE_BYTES = 2 * 1024 * 1024;
const COMPACT_TIMEOUT_MS = 120_000;
const WATCH_RETRY_FIRST_MS = 100;
const WATCH_RETRY_MAX_MS = 5_000;
/** How long a failed endpoint is skipped when there are others to try. */
const ENDPOINT_SUSPEND_MS = 2_000;
const LIST_ATTEMPTS_ON_COMPACTION = 3;

interface Settings {
  endpoints: string[];
  prefixBytes: Buffer;
  /** A key for cheap count-only reads whose only purpose is the response header. */
  probeKey: Buffer;
  requestTimeoutMs: number;
  connectTimeoutMs: number;
  progressIntervalMs: number;
  credentials: grpc.ChannelCredentials;
  channelOptions: grpc.ChannelOptions;
  etcd3Credentials: IOptions['credentials'];
}

/** What a failed call was doing, to name it in the error. */
interface OpContext {
  op: string;
  key?: string;
  revision?: number;
  write?: boolean;
}

// ---------------------------------------------------------------------------------------
// Opening

export async function openEtcdStorage(options: EtcdStorageOptions): Promise<EtcdStorage> {
  const settings = resolveSettings(options);
  const watchService = await loadWatchService();
  const client = new Etcd3({
    hosts: settings.endpoints,
    credentials: settings.etcd3Credentials,
    grpcOptions: settings.channelOptions,
    defaultCallOptions: (ctx) => (ctx.isStream ? {} : { deadline: Date.now() + settings.requestTimeoutMs }),
    faultHandling: {
      global: passThroughPolicy(),
      host: () => (settings.endpoints.length > 1 ? endpointBreaker() : passThroughPolicy()),
    },
  });
  let version: string;
  try {
    version = await checkConnectivity(client, settings);
  } catch (err) {
    client.close();
    throw err;
  }
  const watchClients = settings.endpoints.map(
    (endpoint) =>
      new watchService(
        hostPort(endpoint),
        settings.credentials,
        settings.channelOptions,
      ) as unknown as WatchServiceClient,
  );
  const storage = new EtcdStorage(client, watchClients, settings, trustsRequestedProgress(version));
  storage.startCompactor({
    intervalMs: options.compactionIntervalMs ?? DEFAULT_COMPACTION_INTERVAL_MS,
    clock: options.clock ?? realClock,
    logger: options.logger,
    historyBound: options.historyBound,
  });
  return storage;
}

function resolveSettings(options: EtcdStorageOptions): Settings {
  const endpoints = options.endpoints.map((e) => e.trim()).filter((e) => e !== '');
  if (endpoints.length === 0)
    throw new StorageError(
      'Unavailable',
      'no etcd endpoints configured: give at least one, e.g. http://127.0.0.1:2379',
    );
  for (const e of endpoints) {
    if (!/^https?:\/\/[^/]+$/.test(e)) {
      throw new StorageError(
        'Unavailable',
        `invalid etcd endpoint "${e}": expected http://host:port or https://host:port`,
      );
    }
  }
  const secure = endpoints.map((e) => e.startsWith('https://'));
  if (secure.some((s) => s !== secure[0])) {
    throw new StorageError(
      'Unavailable',
      `etcd endpoints mix http and https (${endpoints.join(', ')}): use one scheme for all`,
    );
  }
  const prefix = options.prefix ?? DEFAULT_PREFIX;
  if (options.tls && !secure[0]) {
    throw new StorageError(
      'Unavailable',
      `TLS settings were given but the etcd endpoints use http:// (${endpoints.join(', ')}): use https:// endpoints`,
    );
  }
  const tls = options.tls ?? {};
  const buf = (v: string | Buffer | undefined) => (v === undefined ? undefined : Buffer.from(v));
  const [ca, cert, key] = [buf(tls.ca), buf(tls.cert), buf(tls.key)];
  const channelOptions: grpc.ChannelOptions = {
    'grpc.max_receive_message_length': options.maxReceiveMessageBytes ?? 64 * 1024 * 1024,
    'grpc.max_send_message_length': -1,
    // grpc-js backs off up to 120 s between reconnects by default: a restarted etcd
    // would then stay unused for minutes.
    'grpc.initial_reconnect_backoff_ms': 200,
    'grpc.max_reconnect_backoff_ms': 5_000,
    // Detects a vanished etcd host under a long-lived watch; etcd allows pings every 5 s.
    'grpc.keepalive_time_ms': 10_000,
    'grpc.keepalive_timeout_ms': 5_000,
  };
  if (tls.serverName) {
    channelOptions['grpc.ssl_target_name_override'] = tls.serverName;
    channelOptions['grpc.default_authority'] = tls.serverName;
  }
  return {
    endpoints,
    prefixBytes: Buffer.from(prefix),
    probeKey: rangeStart(Buffer.from(prefix)),
    requestTimeoutMs: options.requestTimeoutMs ?? 10_000,
    connectTimeoutMs: options.connectTimeoutMs ?? 5_000,
    progressIntervalMs: options.progressIntervalMs ?? 1_000,
    credentials: secure[0]
      ? grpc.credentials.createSsl(ca ?? null, key ?? null, cert ?? null)
      : grpc.credentials.createInsecure(),
    channelOptions,
    etcd3Credentials:
      secure[0] && (ca || cert || key)
        ? ({ rootCertificate: ca, privateKey: key, certChain: cert } as IOptions['credentials'])
        : undefined,
  };
}

/** Returns the server version; a linearizable read also proves there is a leader. */
async function checkConnectivity(client: Etcd3, settings: Settings): Promise<string> {
  const deadline = Date.now() + settings.connectTimeoutMs;
  const attempts = settings.endpoints.length;
  try {
    const status = await failover(
      () => client.maintenance.status({ deadline }),
      attempts,
      isConnectionFailure,
    );
    await failover(
      () => client.kv.range({ key: settings.probeKey, count_only: true }, { deadline }),
      attempts,
      isConnectionFailure,
    );
    return status.version;
  } catch (err) {
    throw new StorageError(
      'Unavailable',
      `cannot reach etcd at ${settings.endpoints.join(', ')} within ${settings.connectTimeoutMs} ms (${errorMessage(err)}). ` +
        'Check that etcd is running, listening on that address and has a leader, that the scheme (http/https) and TLS files match its configuration, or point kubelab at the right endpoints.',
    );
  }
}

/**
 * Requested progress notifications on older servers can overtake pending events
 * (etcd-io/etcd#15220, fixed in 3.4.31 / 3.5.13 together with #17507), which would let a
 * cache claim freshness it does not have.
 */
function trustsRequestedProgress(version: string): boolean {
  const m = /^(\d+)\.(\d+)\.(\d+)/.exec(version);
  if (!m) return false;
  const [major, minor, patch] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (major !== 3) return major > 3;
  if (minor === 4) return patch >= 31;
  if (minor === 5) return patch >= 13;
  return minor > 5;
}

type Policy = NonNullable<NonNullable<IOptions['faultHandling']>['global']>;

/** etcd3 only calls `execute`; this one runs the call once, so no write is ever replayed. */
function passThroughPolicy(): Policy {
  return {
    execute: (fn: (ctx: { signal: AbortSignal }) => unknown) => fn({ signal: new AbortController().signal }),
  } as unknown as Policy;
}

class EndpointSuspendedError extends Error {}

/**
 * With several endpoints, an endpoint that just failed to connect is skipped for a moment so
 * etcd3 picks another one (it moves on only when a policy refuses without calling through).
 */
function endpointBreaker(): Policy {
  let suspendedUntil = 0;
  const execute = async (fn: (ctx: { signal: AbortSignal }) => Promise<unknown>) => {
    if (Date.now() < suspendedUntil) throw new EndpointSuspendedError('endpoint recently failed to connect');
    try {
      return await fn({ signal: new AbortController().signal });
    } catch (err) {
      if (isConnectionFailure(err)) suspendedUntil = Date.now() + ENDPOINT_SUSPEND_MS;
      throw err;
    }
  };
  return { execute } as unknown as Policy;
}

/**
 * Runs `call` up to `attempts` times while it fails with a retryable error; each attempt goes
 * to an endpoint etcd3 picks, skipping the ones that just failed (see endpointBreaker).
 */
async function failover<T>(
  call: () => Promise<T>,
  attempts: number,
  retryable: (err: unknown) => boolean,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (err) {
      if (attempt >= attempts || !retryable(err)) throw err;
    }
  }
}

/** grpc-js failed the call before it had a connection, so etcd never saw it: even a write may be retried. */
function neverSent(err: unknown): boolean {
  return (
    err instanceof EndpointSuspendedError ||
    (err instanceof GRPCUnavailableError && errorMessage(err).includes('No connection established'))
  );
}

function isConnectionFailure(err: unknown): boolean {
  return (
    err instanceof GRPCUnavailableError ||
    err instanceof GRPCDeadlineExceededError ||
    err instanceof ClientClosedError ||
    err instanceof EndpointSuspendedError
  );
}

function hostPort(endpoint: string): string {
  return endpoint.replace(/^https?:\/\//, '');
}

// ---------------------------------------------------------------------------------------
// Raw watch stream types (rpc.proto loaded with keepCase, longs as strings, enums as names)

interface RawKv {
  key: Buffer;
  value: Buffer;
  create_revision: string;
  mod_revision: string;
  version: string;
}

interface RawEvent {
  type: 'Put' | 'Delete';
  kv: RawKv;
  prev_kv: RawKv | null;
}

interface WatchRequestMsg {
  create_request?: {
    key: Buffer;
    range_end: Buffer;
    start_revision: number;
    prev_kv: boolean;
    progress_notify: boolean;
    fragment: boolean;
  };
  progress_request?: Record<string, never>;
}

interface WatchResponseMsg {
  header: { revision: string } | null;
  watch_id: string;
  created: boolean;
  canceled: boolean;
  compact_revision: string;
  cancel_reason: string;
  fragment: boolean;
  events: RawEvent[];
}

type WatchStream = grpc.ClientDuplexStream<WatchRequestMsg, WatchResponseMsg>;

interface WatchServiceClient extends grpc.Client {
  watch(): WatchStream;
}

let watchServiceLoading: Promise<grpc.ServiceClientConstructor> | undefined;

function loadWatchService(): Promise<grpc.ServiceClientConstructor> {
  watchServiceLoading ??= (async () => {
    const protoDir = join(dirname(createRequire(import.meta.url).resolve('etcd3/package.json')), 'proto');
    const definition = await protoLoader.load(join(protoDir, 'rpc.proto'), {
      keepCase: true,
      longs: String,
      enums: String,
      defaults: true,
      oneofs: true,
      includeDirs: [protoDir],
    });
    const pkg = grpc.loadPackageDefinition(definition).etcdserverpb as grpc.GrpcObject;
    return pkg.Watch as grpc.ServiceClientConstructor;
  })();
  watchServiceLoading.catch(() => (watchServiceLoading = undefined));
  return watchServiceLoading;
}

// ---------------------------------------------------------------------------------------
// Small conversions

/** etcd's int64 revisions arrive as strings; they fit a double exactly for ~285 000 years of 1 000 writes/s. */
function toRevision(value: string | number | null | undefined): number {
  const n = Number(value ?? 0);
  if (!Number.isSafeInteger(n))
    throw new StorageError(
      'Unavailable',
      `etcd returned revision ${String(value)}, too large to handle exactly`,
    );
  return n;
}

/** The byte-wise upper bound of every key that starts with `prefix` (etcd compares bytes). */
function prefixEndBytes(prefix: Buffer): Buffer {
  for (let i = prefix.length - 1; i >= 0; i--) {
    if (prefix[i] < 0xff) {
      const end = Buffer.from(prefix.subarray(0, i + 1));
      end[i]++;
      return end;
    }
  }
  return Buffer.from([0]); // '\0' as range_end means "to the end of the keyspace"
}

/** etcd rejects an empty key; '\0' is the smallest key it accepts, so it starts the same range. */
function rangeStart(key: Buffer): Buffer {
  return key.length > 0 ? key : Buffer.from([0]);
}

function revisionProblem(err: unknown): 'compacted' | 'future' | undefined {
  const message = errorMessage(err);
  if (message.includes('required revision has been compacted')) return 'compacted';
  if (message.includes('required revision is a future revision')) return 'future';
  return undefined;
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function compactedError(requested: number | undefined, compactedRevision: number | undefined): StorageError {
  const oldest = compactedRevision ? ` (the oldest available is ${compactedRevision})` : '';
  return new StorageError(
    'Compacted',
    `revision ${requested ?? '?'} has been compacted${oldest}; list again to get a current revision`,
    {
      requestedRevision: requested,
      compactedRevision,
    },
  );
}

// ---------------------------------------------------------------------------------------
// The storage

export class EtcdStorage implements Storage, CompactionBackend {
  readonly backend = 'etcd' as const;
  private closed = false;
  private compactor: EtcdCompactor | undefined;
  private readonly watches = new Set<EtcdWatch>();
  /** A lower bound of etcd's compacted revision: compaction only moves forward. */
  private compactedAtLeast = 0;
  private nextWatchClient = 0;

  /** Use `openEtcdStorage`, which checks that etcd answers first. */
  constructor(
    private readonly client: Etcd3,
    private readonly watchClients: WatchServiceClient[],
    private readonly settings: Settings,
    private readonly requestedProgressIsSafe: boolean,
  ) {}

  async get(key: string): Promise<KeyValue | undefined> {
    const res = await this.read(() => this.client.kv.range({ key: this.storedKey(key) }), { op: 'get', key });
    return res.kvs.length > 0 ? this.toKeyValue(res.kvs[0]) : undefined;
  }

  async list(prefix: string, options: ListOptions = {}): Promise<ListResult> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.listOnce(prefix, options);
      } catch (err) {
        // A compaction between the pages of a "current" list is not the caller's fault.
        const current = !options.revision || options.revision <= 0;
        if (!(err instanceof StorageError) || err.code !== 'Compacted') throw err;
        if (!current || attempt >= LIST_ATTEMPTS_ON_COMPACTION)
          throw compactedError(err.details.requestedRevision, await this.compactedRevisionOrUndefined());
      }
    }
  }

  async create(key: string, value: string): Promise<KeyValue> {
    const k = this.storedKey(key);
    const res = await this.txn(
      [{ key: k, target: CompareTarget.Create, result: CompareResult.Equal, create_revision: 0 }],
      [{ request_put: { key: k, value: Buffer.from(value) } }],
      [],
      { op: 'create', key, write: true },
    );
    if (!res.succeeded) throw new StorageError('KeyExists', `${key} already exists`, { key });
    const revision = toRevision(res.header.revision);
    return { key, value, createRevision: revision, modRevision: revision };
  }

  async update(key: string, value: string, expectedRevision: number): Promise<KeyValue> {
    const k = this.storedKey(key);
    const res = await this.txn(
      this.existsAt(k, expectedRevision),
      [{ request_put: { key: k, value: Buffer.from(value), prev_kv: true } }],
      [{ request_range: { key: k } }],
      { op: 'update', key, write: true },
    );
    if (!res.succeeded) throw this.casFailure(key, res, expectedRevision);
    const prev = res.responses[0].response_put.prev_kv;
    const revision = toRevision(res.header.revision);
    return { key, value, createRevision: toRevision(prev.create_revision), modRevision: revision };
  }

  async delete(key: string, expectedRevision?: number): Promise<KeyValue> {
    const k = this.storedKey(key);
    const compare: ICompare[] =
      expectedRevision === undefined
        ? [{ key: k, target: CompareTarget.Create, result: CompareResult.Greater, create_revision: 0 }]
        : this.existsAt(k, expectedRevision);
    const res = await this.txn(
      compare,
      [{ request_delete_range: { key: k, prev_kv: true } }],
      [{ request_range: { key: k } }],
      { op: 'delete', key, write: true },
    );
    if (!res.succeeded) throw this.casFailure(key, res, expectedRevision);
    const prev = res.responses[0].response_delete_range.prev_kvs[0];
    return { ...this.toKeyValue(prev), modRevision: toRevision(res.header.revision) };
  }

  watch(prefix: string, fromRevision: number, callbacks: WatchCallbacks): WatchHandle {
    const key = Buffer.concat([this.settings.prefixBytes, Buffer.from(prefix)]);
    const watch = new EtcdWatch(
      {
        key: rangeStart(key),
        rangeEnd: prefixEndBytes(key),
        describe: `"${prefix}"`,
        decodeKey: (k) => this.userKey(k),
        openStream: () => this.openWatchStream(),
        checkStart: (revision) => this.checkWatchStart(revision),
        progressIntervalMs:
          this.requestedProgressIsSafe && callbacks.onProgress ? this.settings.progressIntervalMs : 0,
        onFinished: (w) => this.watches.delete(w),
      },
      fromRevision,
      callbacks,
    );
    this.watches.add(watch);
    // Never call back before watch() has returned its handle.
    if (this.closed) queueMicrotask(() => watch.fail(new StorageError('Unavailable', 'the store is closed')));
    else watch.start();
    return watch;
  }

  async currentRevision(): Promise<number> {
    const res = await this.read(
      () => this.client.kv.range({ key: this.settings.probeKey, count_only: true }),
      { op: 'read the current revision' },
    );
    return toRevision(res.header.revision);
  }

  /**
   * etcd does not report its compacted revision, but a range at revision r fails exactly when
   * r is below it: probe from the known lower bound, then binary-search (a handful of cheap
   * reads; usually one).
   */
  async compactedRevision(): Promise<number> {
    let low = Math.max(this.compactedAtLeast, 1);
    if ((await this.availability(low)) !== 'compacted') return low <= 1 ? this.compactedAtLeast : low;
    let high = await this.currentRevision(); // never compacted: etcd refuses to compact past it
    while (high - low > 1) {
      const mid = Math.floor((low + high) / 2);
      if ((await this.availability(mid)) === 'compacted') low = mid;
      else high = mid;
    }
    this.compactedAtLeast = Math.max(this.compactedAtLeast, high);
    return high;
  }

  async compact(revision: number): Promise<void> {
    if (revision <= this.compactedAtLeast) return;
    try {
      await this.read(
        () =>
          this.client.kv.compact({ revision, physical: true }, { deadline: Date.now() + COMPACT_TIMEOUT_MS }),
        { op: 'compact', revision },
      );
    } catch (err) {
      // Compacting at or below an earlier compaction is a no-op, not a failure.
      if (!(err instanceof StorageError) || err.code !== 'Compacted') throw err;
    }
    this.compactedAtLeast = Math.max(this.compactedAtLeast, revision);
  }

  /** Compacts on a timer (openEtcdStorage starts it); close() stops it. */
  startCompactor(options: ConstructorParameters<typeof EtcdCompactor>[1]): EtcdCompactor {
    this.compactor?.stop();
    this.compactor = new EtcdCompactor(this, options);
    this.compactor.start();
    return this.compactor;
  }

  /** The compactor on the timer, if any (tests await its rounds). */
  get compaction(): EtcdCompactor | undefined {
    return this.compactor;
  }

  /**
   * kube-apiserver's compactor turn (etcd3/compact.go): if compact_rev_key's version is
   * `expectVersion`, record `revision` in it, which bumps the version; else read it.
   */
  async claimCompaction(
    expectVersion: number,
    revision: number,
    at: number,
    samples: readonly RetentionSample[] = [],
  ): Promise<CompactionClaim> {
    // Not under the prefix: compaction is global to the etcd cluster, and so is the turn.
    const key = Buffer.from(COMPACT_REV_KEY);
    const res = await this.txn(
      [{ key, target: CompareTarget.Version, result: CompareResult.Equal, version: expectVersion }],
      [
        { request_put: { key, value: Buffer.from(String(revision)) } },
        // In the same transaction, so their mod revision says which turn they date.
        { request_put: { key: Buffer.from(COMPACT_TIME_KEY), value: Buffer.from(String(at)) } },
        {
          request_put: { key: Buffer.from(COMPACT_SAMPLES_KEY), value: Buffer.from(formatSamples(samples)) },
        },
      ],
      [{ request_range: { key } }],
      { op: `take a compaction turn (${COMPACT_REV_KEY})`, write: true },
    );
    const current = toRevision(res.header.revision);
    if (res.succeeded) return { claimed: true, version: expectVersion + 1, revision: current };
    const kv = res.responses[0]?.response_range?.kvs?.[0];
    // Deleted by someone: version 0 is what a missing key compares as.
    if (!kv) return { claimed: false, version: 0, revision: current };
    const recorded = Number(kv.value.toString('utf8'));
    return {
      claimed: false,
      version: toRevision(kv.version),
      revision: current,
      recorded: Number.isSafeInteger(recorded) && recorded > 0 ? recorded : undefined,
    };
  }

  async readCompactionMark(): Promise<CompactionMark | undefined> {
    const turn = Buffer.from(COMPACT_REV_KEY);
    const time = Buffer.from(COMPACT_TIME_KEY);
    const samplesKey = Buffer.from(COMPACT_SAMPLES_KEY);
    const res = await this.txn(
      [],
      [
        { request_range: { key: turn } },
        { request_range: { key: time } },
        { request_range: { key: samplesKey } },
      ],
      [],
      { op: `read the last compaction turn (${COMPACT_REV_KEY}, ${COMPACT_TIME_KEY})` },
    );
    const [turnKv, timeKv, samplesKv] = res.responses.map((r) => r.response_range?.kvs?.[0]);
    // A turn taken without the time (a kube-apiserver's) is newer than the time: not usable.
    const turnRevision = turnKv ? toRevision(turnKv.mod_revision) : 0;
    if (!turnKv || !timeKv || turnRevision !== toRevision(timeKv.mod_revision)) return undefined;
    const at = Number(timeKv.value.toString('utf8'));
    if (!Number.isSafeInteger(at) || at <= 0) return undefined;
    const samples =
      samplesKv && toRevision(samplesKv.mod_revision) === turnRevision ? parseSamples(samplesKv.value) : [];
    return { version: toRevision(turnKv.version), revision: turnRevision, at, samples };
  }

  /** Compaction metrics (kubelab_etcd_compactions_total, kubelab_etcd_compacted_revision). */
  registerMetrics(registry: Registry): void {
    this.compactor?.registerMetrics(registry);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.compactor?.stop();
    for (const watch of [...this.watches]) watch.cancel();
    for (const c of this.watchClients) c.close();
    this.client.close();
  }

  // --- keys and values

  private storedKey(key: string): Buffer {
    return Buffer.concat([this.settings.prefixBytes, Buffer.from(key)]);
  }

  private userKey(stored: Buffer): string {
    return stored.subarray(this.settings.prefixBytes.length).toString('utf8');
  }

  private toKeyValue(kv: IKeyValue): KeyValue {
    return {
      key: this.userKey(kv.key),
      value: kv.value.toString('utf8'),
      createRevision: toRevision(kv.create_revision),
      modRevision: toRevision(kv.mod_revision),
    };
  }

  // --- transactions

  /** The key exists and was last written at `revision` (mod_revision 0 alone would match a missing key). */
  private existsAt(key: Buffer, revision: number): ICompare[] {
    return [
      { key, target: CompareTarget.Mod, result: CompareResult.Equal, mod_revision: revision },
      { key, target: CompareTarget.Create, result: CompareResult.Greater, create_revision: 0 },
    ];
  }

  private casFailure(key: string, res: ITxnResponse, expected: number | undefined): StorageError {
    const kvs = res.responses[0]?.response_range?.kvs ?? [];
    if (kvs.length === 0) return new StorageError('NotFound', `${key} not found`, { key });
    const current = this.toKeyValue(kvs[0]);
    return new StorageError(
      'Conflict',
      `${key} was modified (now at revision ${current.modRevision}, expected ${expected})`,
      { key, current },
    );
  }

  /**
   * A transaction whose answer was lost may have been applied, so it is only retried (on
   * another endpoint) when it provably never left this process.
   */
  private async txn(
    compare: ICompare[],
    success: IRequestOp[],
    failure: IRequestOp[],
    ctx: OpContext,
  ): Promise<ITxnResponse> {
    this.assertOpen();
    try {
      return await failover(
        () => this.client.kv.txn({ compare, success, failure }),
        this.settings.endpoints.length,
        neverSent,
      );
    } catch (err) {
      throw this.toStorageError(err, ctx);
    }
  }

  private async read<T>(call: () => Promise<T>, ctx: OpContext): Promise<T> {
    try {
      return await this.withFailover(call);
    } catch (err) {
      throw this.toStorageError(err, ctx);
    }
  }

  /** Reads are idempotent: on a connection failure, try the other endpoints. Throws etcd3's error. */
  private async withFailover<T>(call: () => Promise<T>): Promise<T> {
    this.assertOpen();
    return failover(call, this.settings.endpoints.length, isConnectionFailure);
  }

  private assertOpen(): void {
    if (this.closed) throw new StorageError('Unavailable', 'the store is closed');
  }

  private toStorageError(err: unknown, ctx: OpContext): StorageError {
    if (err instanceof StorageError) return err;
    const message = errorMessage(err);
    const subject = ctx.key ? ` ${ctx.key}` : '';
    const problem = revisionProblem(err);
    if (problem === 'compacted') return compactedError(ctx.revision, this.compactedAtLeast || undefined);
    if (problem === 'future') {
      return new StorageError(
        'Unavailable',
        `${ctx.op}: revision ${ctx.revision} is newer than etcd's current revision`,
        { requestedRevision: ctx.revision },
      );
    }
    if (err instanceof GRPCResourceExhastedError) {
      return new StorageError(
        'TooLarge',
        `${ctx.op}${subject}: a message exceeds a gRPC size limit (etcd accepts requests up to its --max-request-bytes plus 512 KiB; this client accepts answers up to maxReceiveMessageBytes): ${message}`,
        { key: ctx.key },
      );
    }
    if (message.includes('request is too large')) {
      return new StorageError(
        'TooLarge',
        `${ctx.op}${subject}: the request exceeds etcd's --max-request-bytes`,
        { key: ctx.key },
      );
    }
    if (message.includes('database space exceeded')) {
      return new StorageError(
        'Unavailable',
        `${ctx.op}${subject}: etcd is out of space (NOSPACE alarm): compact and defragment etcd or raise --quota-backend-bytes, then disarm the alarm`,
      );
    }
    if (this.closed || err instanceof ClientClosedError)
      return new StorageError('Unavailable', 'the store is closed');
    if (isConnectionFailure(err)) {
      const outcome = ctx.write
        ? '; the write may or may not have been applied (read the key to find out)'
        : '';
      return new StorageError(
        'Unavailable',
        `${ctx.op}${subject}: cannot reach etcd at ${this.settings.endpoints.join(', ')} (${message})${outcome}. Check that etcd is running and reachable, then retry.`,
        { key: ctx.key },
      );
    }
    return new StorageError('Unavailable', `${ctx.op}${subject}: etcd failed: ${message}`, { key: ctx.key });
  }

  // --- lists

  private async listOnce(prefix: string, options: ListOptions): Promise<ListResult> {
    const base = Buffer.concat([this.settings.prefixBytes, Buffer.from(prefix)]);
    const end = prefixEndBytes(base);
    const from = options.startKey === undefined ? base : this.storedKey(options.startKey);
    // A startKey past the prefix gives an inverted range, which etcd answers as empty.
    let start = rangeStart(Buffer.compare(from, base) > 0 ? from : base);
    const wanted = options.limit && options.limit > 0 ? options.limit : Infinity;
    let revision = options.revision && options.revision > 0 ? options.revision : 0;
    let total: number | undefined;
    let pageKeys = FIRST_PAGE_KEYS;
    const items: KeyValue[] = [];
    while (items.length < wanted) {
      const limit = Math.min(pageKeys, wanted - items.length);
      const page = await this.rangePage(
        { key: start, range_end: end, revision, limit },
        { op: `list ${prefix}`, revision: revision || undefined },
      );
      // Later pages read at the first page's revision, so the pages form one snapshot.
      if (revision === 0) revision = toRevision(page.res.header.revision);
      total ??= toRevision(page.res.count);
      for (const kv of page.res.kvs) items.push(this.toKeyValue(kv));
      if (!page.res.more || page.res.kvs.length === 0) break;
      start = Buffer.concat([page.res.kvs[page.res.kvs.length - 1].key, Buffer.from([0])]);
      pageKeys = nextPageKeys(page.res.kvs, page.limit);
    }
    return { items, revision, remaining: Math.max(0, (total ?? 0) - items.length) };
  }

  /** One range page; halves the page while a response would exceed the receive limit. */
  private async rangePage(
    req: IRangeRequest & { limit: number },
    ctx: OpContext,
  ): Promise<{ res: IRangeResponse; limit: number }> {
    let limit = req.limit;
    for (;;) {
      try {
        return { res: await this.withFailover(() => this.client.kv.range({ ...req, limit })), limit };
      } catch (err) {
        if (!(err instanceof GRPCResourceExhastedError) || limit <= 1) throw this.toStorageError(err, ctx);
        limit = Math.max(1, Math.floor(limit / 2));
      }
    }
  }

  private async compactedRevisionOrUndefined(): Promise<number | undefined> {
    try {
      return await this.compactedRevision();
    } catch {
      return this.compactedAtLeast || undefined;
    }
  }

  private async availability(revision: number): Promise<'available' | 'compacted' | 'future'> {
    try {
      await this.withFailover(() =>
        this.client.kv.range({ key: this.settings.probeKey, revision, count_only: true }),
      );
      return 'available';
    } catch (err) {
      const problem = revisionProblem(err);
      if (problem) return problem;
      throw this.toStorageError(err, { op: `check revision ${revision}`, revision });
    }
  }

  // --- watches

  /**
   * etcd accepts a watch starting at its compacted revision C, but our rule (types.ts) says a
   * watch from R (exclusive, start R+1) needs R >= C, so R itself must still be readable.
   */
  private async checkWatchStart(fromRevision: number): Promise<StorageError | undefined> {
    // Revision 0 cannot be probed (it means "current"); etcd itself refuses start 1 if needed.
    if (fromRevision < 1 || (await this.availability(fromRevision)) !== 'compacted') return undefined;
    return compactedError(fromRevision, await this.compactedRevisionOrUndefined());
  }

  private openWatchStream(): WatchStream {
    this.assertOpen();
    const client = this.watchClients[this.nextWatchClient++ % this.watchClients.length];
    return client.watch();
  }
}

function nextPageKeys(kvs: IKeyValue[], previous: number): number {
  let bytes = 0;
  for (const kv of kvs) bytes += kv.key.length + kv.value.length + 64;
  const perKey = Math.max(1, bytes / Math.max(1, kvs.length));
  const next = Math.floor(TARGET_PAGE_BYTES / perKey);
  return Math.min(MAX_PAGE_KEYS, Math.max(1, Math.min(next, previous * 4)));
}

// ---------------------------------------------------------------------------------------
// One watch: its own gRPC stream with a single watcher, resumed after connection loss.

interface WatchContext {
  key: Buffer;
  rangeEnd: Buffer;
  describe: string;
  decodeKey(key: Buffer): string;
  openStream(): WatchStream;
  /** Resolves to an error when the start revision is compacted; throws when etcd is unreachable. */
  checkStart(fromRevision: number): Promise<StorageError | undefined>;
  /** 0: do not send progress requests. */
  progressIntervalMs: number;
  onFinished(watch: EtcdWatch): void;
}

class EtcdWatch implements WatchHandle {
  private finished = false;
  private stream: WatchStream | undefined;
  private watchId: string | undefined;
  /** Every event with a revision <= delivered has been passed to onEvents. */
  private delivered: number;
  private progressReported = 0;
  private fragments: RawEvent[] = [];
  private retryMs = WATCH_RETRY_FIRST_MS;
  private retryTimer: NodeJS.Timeout | undefined;
  private progressTimer: NodeJS.Timeout | undefined;
  private eventsSinceProgressRequest = false;

  constructor(
    private readonly ctx: WatchContext,
    private readonly fromRevision: number,
    private readonly callbacks: WatchCallbacks,
  ) {
    this.delivered = fromRevision;
  }

  start(): void {
    void this.checkThenConnect();
  }

  cancel(): void {
    if (this.finished) return;
    this.finished = true;
    clearTimeout(this.retryTimer);
    clearInterval(this.progressTimer);
    const stream = this.stream;
    this.stream = undefined;
    stream?.cancel();
    this.ctx.onFinished(this);
  }

  /** Ends the watch and reports why, once. */
  fail(err: StorageError): void {
    if (this.finished) return;
    this.cancel();
    try {
      this.callbacks.onError(err);
    } catch {
      // The watch is over; nothing is left to tell about a failing error handler.
    }
  }

  private async checkThenConnect(): Promise<void> {
    let refusal: StorageError | undefined;
    try {
      refusal = await this.ctx.checkStart(this.fromRevision);
    } catch {
      // etcd is unreachable for now (a closed store has already cancelled this watch).
      return this.retryLater(() => this.checkThenConnect());
    }
    if (this.finished) return;
    if (refusal) return this.fail(refusal);
    this.connect();
  }

  private connect(): void {
    if (this.finished) return;
    let stream: WatchStream;
    try {
      stream = this.ctx.openStream();
    } catch (err) {
      return this.fail(
        err instanceof StorageError
          ? err
          : new StorageError('Unavailable', `cannot open a watch stream: ${errorMessage(err)}`),
      );
    }
    this.stream = stream;
    this.watchId = undefined;
    this.fragments = [];
    // grpc-js emits 'error' for every non-OK end, including our own cancel(): always listened to.
    stream.on('error', () => this.onStreamEnded(stream));
    stream.on('end', () => this.onStreamEnded(stream));
    stream.on('data', (res: WatchResponseMsg) => {
      if (stream !== this.stream) return;
      try {
        this.onResponse(res);
      } catch (err) {
        // Only a malformed response gets here (callbacks are guarded): never throw into grpc-js.
        this.fail(
          err instanceof StorageError
            ? err
            : new StorageError('Unavailable', `unexpected watch response from etcd: ${errorMessage(err)}`),
        );
      }
    });
    stream.write({
      create_request: {
        key: this.ctx.key,
        range_end: this.ctx.rangeEnd,
        // Never 0: etcd would read that as "from now" and skip history.
        start_revision: Math.max(this.delivered, 0) + 1,
        prev_kv: true,
        // Server-side progress goes through the watcher's own channel, so it is always ordered.
        progress_notify: true,
        fragment: true,
      },
    });
  }

  private onStreamEnded(stream: WatchStream): void {
    if (stream !== this.stream) return;
    this.stream = undefined;
    clearInterval(this.progressTimer);
    stream.cancel();
    // Resume from the last delivered revision: etcd replays the rest, or cancels with
    // compact_revision if it is gone.
    this.retryLater(() => this.connect());
  }

  private retryLater(run: () => void | Promise<void>): void {
    if (this.finished) return;
    const delay = this.retryMs;
    this.retryMs = Math.min(this.retryMs * 2, WATCH_RETRY_MAX_MS);
    this.retryTimer = setTimeout(() => void run(), delay);
    this.retryTimer.unref();
  }

  private onResponse(res: WatchResponseMsg): void {
    if (res.created) this.onCreated(res);
    if (res.canceled) return this.onCanceled(res);
    if (res.events.length > 0 || res.fragment) return this.onEventMessage(res);
    if (!res.created) this.onProgressMessage(res);
  }

  private onCreated(res: WatchResponseMsg): void {
    this.watchId = res.watch_id;
    this.retryMs = WATCH_RETRY_FIRST_MS;
    this.startProgressRequests();
  }

  private onCanceled(res: WatchResponseMsg): void {
    const compactRevision = toRevision(res.compact_revision);
    if (compactRevision > 0) return this.fail(compactedError(this.delivered, compactRevision));
    this.fail(
      new StorageError(
        'Unavailable',
        `etcd cancelled the watch on ${this.ctx.describe}: ${res.cancel_reason || 'no reason given'}; list again and watch from the new revision`,
      ),
    );
  }

  private onEventMessage(res: WatchResponseMsg): void {
    this.fragments.push(...res.events);
    if (res.fragment) return; // more of the same revision batch follows
    const raw = this.fragments;
    this.fragments = [];
    const events: StorageEvent[] = [];
    for (const r of raw) {
      const revision = toRevision(r.kv.mod_revision);
      // A reconnect replays from delivered+1; never hand the same revision out twice.
      if (revision <= this.delivered) continue;
      const event = this.toEvent(r, revision);
      if (!event) {
        return this.fail(compactedError(revision - 1, undefined));
      }
      events.push(event);
    }
    if (events.length === 0) return;
    this.delivered = events[events.length - 1].revision;
    this.eventsSinceProgressRequest = true;
    this.deliver(() => this.callbacks.onEvents(events));
  }

  /**
   * Undefined when etcd could not attach the previous value, which happens only when that
   * revision was compacted while the event was in flight: the caller must relist.
   */
  private toEvent(r: RawEvent, revision: number): StorageEvent | undefined {
    const key = this.ctx.decodeKey(r.kv.key);
    const prev = r.prev_kv;
    if (r.type === 'Delete') {
      if (!prev) return undefined;
      return {
        type: 'delete',
        key,
        value: prev.value.toString('utf8'),
        revision,
        createRevision: toRevision(prev.create_revision),
      };
    }
    if (!prev && toRevision(r.kv.version) > 1) return undefined;
    const event: StorageEvent = {
      type: 'put',
      key,
      value: r.kv.value.toString('utf8'),
      revision,
      createRevision: toRevision(r.kv.create_revision),
    };
    if (prev) event.prevValue = prev.value.toString('utf8');
    return event;
  }

  /**
   * An empty response is progress. Periodic ones carry our watch id and are ordered with the
   * events; answers to progress requests carry -1 and are only requested where they are too.
   */
  private onProgressMessage(res: WatchResponseMsg): void {
    const trusted =
      res.watch_id === this.watchId || (res.watch_id === '-1' && this.ctx.progressIntervalMs > 0);
    if (!trusted || !res.header) return;
    const revision = toRevision(res.header.revision);
    // A watch created at a future revision can be told about an older one (etcd-io/etcd#20229).
    if (revision < this.delivered || revision <= this.progressReported) return;
    this.delivered = revision;
    this.progressReported = revision;
    const onProgress = this.callbacks.onProgress;
    if (onProgress) this.deliver(() => onProgress.call(this.callbacks, revision));
  }

  private startProgressRequests(): void {
    clearInterval(this.progressTimer);
    if (this.ctx.progressIntervalMs <= 0) return;
    this.progressTimer = setInterval(() => {
      // A busy watch proves its progress with events; only a quiet one needs asking.
      if (!this.eventsSinceProgressRequest) this.stream?.write({ progress_request: {} });
      this.eventsSinceProgressRequest = false;
    }, this.ctx.progressIntervalMs);
    this.progressTimer.unref();
  }

  /** A throwing callback must not kill the stream handling (or the process): end the watch instead. */
  private deliver(call: () => void): void {
    if (this.finished) return;
    try {
      call();
    } catch (err) {
      this.fail(
        new StorageError(
          'Unavailable',
          `the watch on ${this.ctx.describe} was stopped because its callback threw: ${errorMessage(err)}`,
        ),
      );
    }
  }
}

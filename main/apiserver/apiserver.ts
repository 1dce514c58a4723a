/**
 * The apiserver: the only component that touches the store. Every request, in-process or
 * over gRPC, goes through the same steps: resolve the kind, authorize, take in the object
 * (schema-checked), admission, defaulting and validation, then a compare-and-swap write;
 * reads and watches are served from the watch cache.
 */
import { randomUUID } from 'node:crypto';
import { ApiError, echo, invalid, isApiError, notFound } from '../../client/api/errors.js';
import { knownKinds, resolveKind, type KindInfo } from '../../client/api/kinds.js';
import { fieldNames } from '../../client/api/schema.js';
import type {
  Identity,
  LocalApi,
  LocalLogSink,
  LocalLogStream,
  LocalWatch,
  LocalWatchSink,
  WriteRequest,
} from '../../client/api/local.js';
import type {
  BindRequest,
  DeleteRequest,
  GetRequest,
  KindName,
  KubeObject,
  ListRequest,
  ListResult,
  LogsRequest,
  ObjectMeta,
  PatchRequest,
  Pod,
  WatchRequest,
} from '../../client/api/types.js';
import {
  invalid as invalidField,
  isDNS1123Subdomain,
  required as requiredField,
  type FieldError,
} from '../../client/api/validation.js';
import { realClock, rfc3339, type Clock } from '../../client/util/clock.js';
import { clone, deepEqual } from '../../client/util/objects.js';
import type { Logger } from '../logging.js';
import { isStorageError, StorageError, type KeyValue, type Storage } from '../storage/types.js';
import { admitCreate, admitDelete, PROTECTED_NAMESPACES, type AdmissionContext } from './admission.js';
import {
  cannotWrite,
  roleAuthorizer,
  type Authorizer,
  type RequestAttributes,
  type Verb,
  whyForbidden,
} from './auth.js';
import { Cacher } from './cacher.js';
import { NodeMetricsHistory } from './metricshistory.js';
import { decodeStored, encodeForStore, kindPrefix, objectKey } from './codec.js';
import { EventExpiry } from './eventttl.js';
import { DEFAULT_MAX_OBJECT_BYTES, intakeObject, tooLarge, type Intake } from './intake.js';
import { ManifestReader, parseApiError } from './manifests.js';
import { nodeCanRead, nodeMayReadConfig, nodeRestriction } from './noderestriction.js';
import { needsRedaction, redactEntry, redactSecret } from './redaction.js';
import { applyPatch, patchKind, readPatch } from './patch.js';
import {
  apply,
  checkFieldManager,
  decodeManagedFields,
  encodeManagedFields,
  followLastApplied,
  isResetRequest,
  recordUpdate,
  validateManagedFields,
} from './fieldmanager/managers.js';
import {
  chooseContainer,
  notScheduled,
  podLogOptions,
  type LogTunnels,
  type PodLogTarget,
} from './podlogs.js';
import { Registry } from './registry/index.js';
import type { Strategy } from './registry/strategy.js';
import {
  decodeContinue,
  encodeContinue,
  fieldSelectorOf,
  invalidContinue,
  kindOf,
  labelSelectorOf,
  propagationPolicyOf,
  resourceVersionOf,
} from './requests.js';
import { FlowControl } from './flowcontrol/dispatcher.js';
import type { FlowControlConfig } from './flowcontrol/levels.js';
import { validateObjectMeta, validateObjectMetaUpdate } from './validation/meta.js';
import type { CachedObject, WatchFilter, WatchSink, WatchStart } from './watchcache.js';

export interface ApiServerOptions {
  storage: Storage;
  clock: Clock;
  logger: Logger;
  authorizer?: Authorizer;
  maxObjectBytes?: number;
  /** Watch-cache history window and BOOKMARK period; see Cacher. */
  historyMs?: number;
  bookmarkMs?: number;
  /** Where kinds kept in memory only (NodeMetrics) live: an in-memory store with 15 min of history. */
  memoryStorage: Storage;
  /** How long Events live after their last occurrence (default 1 hour). */
  eventTtlMs?: number;
  /** Extra admission for writes (e.g. the node restriction), run after the built-in plugins. */
  admission?: Array<(ctx: AdmissionContext) => void | Promise<void>>;
  /** How pods/log reaches agents (the gRPC server's tunnel registry); absent: logs are unavailable. */
  logTunnels?: LogTunnels;
  /** Seats and queues of the priority levels of requests clients send (default DEFAULT_FLOW_CONTROL). */
  flowControl?: FlowControlConfig;
}

/** A list whose items keep their cache entries (the wire layer reuses their encoding). */
export interface CachedList {
  items: CachedObject[];
  resourceVersion: string;
  continue?: string;
  remainingItemCount?: number;
}

const GENERATE_NAME_ATTEMPTS = 5;
/** The longest name any object can have (a DNS subdomain). */
const MAX_OBJECT_NAME = 253;
const NAME_CHARS = 'bcdfghjklmnpqrstvwxz2456789';

/** What a write changes: the object, its status, or (pods) its node through a binding. */
type Subresource = '' | 'status' | 'binding';

export class ApiServer implements LocalApi {
  readonly registry: Registry;
  /** The watch caches of the kinds kept in the store. */
  readonly cacher: Cacher;
  /** The watch caches of the kinds kept in memory only (NodeMetrics). */
  readonly memoryCacher: Cacher;
  readonly eventExpiry: EventExpiry;
  private readonly metricsHistory: NodeMetricsHistory;
  /** Priority and fairness for the requests clients send through the front doors (gRPC, REST). */
  readonly flowControl: FlowControl;
  /** Reads manifests sent as text, within the parse limits (the GUI's Apply reads through it too). */
  readonly manifests = new ManifestReader();
  private readonly storage: Storage;
  private readonly memoryStorage: Storage;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly authorize: Authorizer;
  private readonly maxObjectBytes: number;
  private readonly extraAdmission: NonNullable<ApiServerOptions['admission']>;
  private readonly logTunnels: LogTunnels | undefined;

  constructor(options: ApiServerOptions) {
    this.storage = options.storage;
    this.memoryStorage = options.memoryStorage;
    this.clock = options.clock;
    this.logger = options.logger;
    this.authorize = options.authorizer ?? roleAuthorizer;
    this.maxObjectBytes = options.maxObjectBytes ?? DEFAULT_MAX_OBJECT_BYTES;
    this.extraAdmission = options.admission ?? [];
    this.logTunnels = options.logTunnels;
    this.flowControl = new FlowControl(options.flowControl, options.clock, realClock);
    this.registry = new Registry();
    const cacherOf = (storage: Storage, strategies: Strategy[]) =>
      new Cacher(
        storage,
        strategies.map((s) => ({
          info: s.info,
          getField: (o: KubeObject, f: string) => this.registry.field(s, o, f),
          selectableFields: this.registry.selectableFields(s),
        })),
        {
          clock: this.clock,
          logger: this.logger,
          historyMs: options.historyMs,
          bookmarkMs: options.bookmarkMs,
        },
      );
    this.cacher = cacherOf(
      this.storage,
      this.registry.all().filter((s) => !s.inMemory),
    );
    this.memoryCacher = cacherOf(
      this.memoryStorage,
      this.registry.all().filter((s) => s.inMemory),
    );
    this.metricsHistory = new NodeMetricsHistory(this.clock);
    this.eventExpiry = new EventExpiry(
      this.cacher,
      this.storage,
      this.clock,
      this.logger,
      options.eventTtlMs,
    );
  }

  /** Where a kind lives: the store, or memory only. */
  private backend(info: KindInfo): { storage: Storage; cacher: Cacher } {
    return this.registry.get(info).inMemory
      ? { storage: this.memoryStorage, cacher: this.memoryCacher }
      : { storage: this.storage, cacher: this.cacher };
  }

  /** Fills the watch caches and makes sure the namespaces every cluster has exist. */
  async start(): Promise<void> {
    await Promise.all([this.cacher.start(), this.memoryCacher.start()]);
    this.metricsHistory.follow(this.memoryCacher.cache(kindOf('NodeMetrics')));
    const system: Identity = { name: 'system:apiserver', role: 'admin' };
    for (const name of PROTECTED_NAMESPACES) {
      try {
        await this.create(system, { object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } });
      } catch (err) {
        if (!(err instanceof ApiError && err.reason === 'AlreadyExists')) throw err;
      }
    }
    this.eventExpiry.start();
  }

  stop(): void {
    this.metricsHistory.stop();
    this.eventExpiry.stop();
    this.cacher.stop();
    this.memoryCacher.stop();
  }

  // ================================================================== reads

  async get(id: Identity, req: GetRequest): Promise<KubeObject> {
    return this.guard(async () => {
      const strategy = this.strategyOf(req.kind);
      const info = strategy.info;
      const namespace = this.namespaceOf(info, req.namespace);
      const name = this.requireName(info, req.name);
      this.authorize(id, { verb: 'get', info, namespace, name });
      // No object can have a longer name: answer without building a key of it.
      if (name.length > MAX_OBJECT_NAME) throw notFound(info.kind, name, namespace);
      const rv = resourceVersionOf(req.resourceVersion);
      const key = objectKey(info, namespace, name);
      if (id.role === 'node' && (info.kind === 'Secret' || info.kind === 'ConfigMap'))
        nodeMayReadConfig(id, info, namespace ?? '', name, this.podsBoundTo(id.nodeName, namespace));
      if (rv !== undefined) {
        if (rv > 0 && !(await this.backend(info).cacher.waitFor(rv))) throw tooLargeResourceVersion(rv);
        const cached = this.backend(info).cacher.cache(info).get(key);
        if (!cached) throw notFound(info.kind, name, namespace);
        nodeCanRead(id, info, cached.object);
        return needsRedaction(id, info) ? redactSecret(cached.object) : cached.object;
      }
      const kv = await this.backend(info).storage.get(key);
      if (!kv) throw notFound(info.kind, name, namespace);
      const obj = decodeStored(kv.value, kv.modRevision);
      nodeCanRead(id, info, obj);
      return needsRedaction(id, info) ? redactSecret(obj) : obj;
    });
  }

  async list(id: Identity, req: ListRequest): Promise<ListResult> {
    const result = await this.listCached(id, req);
    return { ...result, items: result.items.map((i) => i.object) };
  }

  async listCached(id: Identity, req: ListRequest): Promise<CachedList> {
    const list = await this.listCachedAsStored(id, req);
    if (!needsRedaction(id, this.strategyOf(req.kind).info)) return list;
    return { ...list, items: list.items.map(redactEntry) };
  }

  private async listCachedAsStored(id: Identity, req: ListRequest): Promise<CachedList> {
    return this.guard(async () => {
      const strategy = this.strategyOf(req.kind);
      const info = strategy.info;
      const namespace = info.namespaced && req.namespace ? req.namespace : undefined;
      // A credential that may not list this kind at all is refused before its selectors are parsed.
      this.authorize(id, { verb: 'list', info, namespace, partial: true });
      const filter = this.filterOf(strategy, namespace, req.labelSelector, req.fieldSelector);
      this.authorize(id, { verb: 'list', info, namespace, fieldSelector: filter.fields });
      const limit = req.limit ?? 0;
      if (limit < 0)
        throw new ApiError('BadRequest', 'limit must be zero (everything) or a positive page size');
      const prefix = kindPrefix(info, namespace);

      if (req.continue) {
        if (req.resourceVersion)
          throw new ApiError('BadRequest', 'send either continue or resourceVersion, not both');
        const token = decodeContinue(req.continue, prefix);
        return this.listFromStore(strategy, filter, prefix, token.rv, token.after, limit);
      }

      const rv = resourceVersionOf(req.resourceVersion);
      const match = req.resourceVersionMatch;
      if (match && match !== 'NotOlderThan' && match !== 'Exact') {
        throw new ApiError(
          'BadRequest',
          `resourceVersionMatch "${match}" is not supported; use NotOlderThan or Exact`,
        );
      }
      if (match === 'Exact') {
        if (!rv)
          throw new ApiError(
            'BadRequest',
            'resourceVersionMatch=Exact needs a resourceVersion other than "" and "0"',
          );
        return this.listFromStore(strategy, filter, prefix, rv, undefined, limit);
      }
      if (rv === undefined) {
        // A consistent read: the cache must have seen the store's current revision.
        if (!(await this.backend(info).cacher.waitUntilFresh())) {
          return this.listFromStore(
            strategy,
            filter,
            prefix,
            await this.backend(info).storage.currentRevision(),
            undefined,
            limit,
          );
        }
      } else if (rv > 0 && !(await this.backend(info).cacher.waitFor(rv))) {
        throw tooLargeResourceVersion(rv);
      }

      const cache = this.backend(info).cacher.cache(info);
      const revision = cache.resourceVersion;
      const page = cache.list(filter, { limit });
      const result: CachedList = { items: page.items, resourceVersion: String(revision) };
      if (page.more) {
        const last = page.items[page.items.length - 1].key;
        result.continue = encodeContinue(revision, last);
        if (!filter.namespace && !filter.labels && !filter.fields)
          result.remainingItemCount = cache.countAfter(last);
      }
      return result;
    });
  }

  /** A page at a fixed revision from the store, filled up to `limit` matches. */
  private async listFromStore(
    strategy: Strategy,
    filter: WatchFilter,
    prefix: string,
    revision: number,
    after: string | undefined,
    limit: number,
  ): Promise<CachedList> {
    const { storage, cacher } = this.backend(strategy.info);
    const cache = cacher.cache(strategy.info);
    const items: CachedObject[] = [];
    let startKey = after !== undefined ? after + '\0' : undefined;
    const chunk = limit > 0 ? Math.max(limit, 100) : 5000;
    for (;;) {
      let page;
      try {
        page = await storage.list(prefix, { revision, limit: chunk, startKey });
      } catch (err) {
        if (isStorageError(err, 'Compacted')) {
          throw new ApiError(
            'Expired',
            'the continue token or resourceVersion is too old to give a consistent list (history was compacted); list again from the start',
          );
        }
        // A revision the store has not reached is the client's doing, not an outage: answering
        // UNAVAILABLE would have clients retry it forever. A continue token (`after`) names a
        // revision this server listed at, so a later one was forged; an Exact list asked for a
        // revision no write has made yet (the store is the authority, so waiting would not help).
        const current = isStorageError(err, 'Unavailable') ? await revisionIfUp(storage) : undefined;
        if (current !== undefined && revision > current)
          throw after !== undefined ? invalidContinue() : exactBeyondStore(revision, current);
        throw err;
      }
      for (let i = 0; i < page.items.length; i++) {
        const kv = page.items[i];
        const object = decodeStored(kv.value, kv.modRevision);
        if (!cache.matches(filter, object)) continue;
        items.push({ key: kv.key, object, rv: kv.modRevision });
        if (limit > 0 && items.length === limit) {
          const more = i < page.items.length - 1 || page.remaining > 0;
          const result: CachedList = { items, resourceVersion: String(revision) };
          if (more) result.continue = encodeContinue(revision, kv.key);
          return result;
        }
      }
      if (page.remaining === 0 || page.items.length === 0) break;
      startKey = page.items[page.items.length - 1].key + '\0';
    }
    return { items, resourceVersion: String(revision) };
  }

  async watch(id: Identity, req: WatchRequest, sink: LocalWatchSink): Promise<LocalWatch> {
    return this.watchCached(id, req, {
      event: (type, obj) => sink.event(type, obj.object),
      bookmark: (rv, end) => sink.bookmark(String(rv), end),
      end: (err) => sink.end(err),
    });
  }

  async watchCached(id: Identity, req: WatchRequest, sink: WatchSink): Promise<LocalWatch> {
    return this.guard(async () => {
      const strategy = this.strategyOf(req.kind);
      const info = strategy.info;
      const namespace = info.namespaced && req.namespace ? req.namespace : undefined;
      this.authorize(id, { verb: 'watch', info, namespace, partial: true });
      const filter = this.filterOf(strategy, namespace, req.labelSelector, req.fieldSelector);
      this.authorize(id, { verb: 'watch', info, namespace, fieldSelector: filter.fields });
      const rv = resourceVersionOf(req.resourceVersion);
      const timeoutSeconds = req.timeoutSeconds ?? 0;
      if (timeoutSeconds < 0) throw new ApiError('BadRequest', 'timeoutSeconds must not be negative');

      let start: WatchStart;
      if (req.sendInitialEvents) {
        if (!req.allowWatchBookmarks) {
          throw new ApiError(
            'BadRequest',
            'sendInitialEvents needs allowWatchBookmarks=true (the end of the initial events is a bookmark)',
          );
        }
        if (rv === undefined) await this.backend(info).cacher.waitUntilFresh();
        else if (rv > 0 && !(await this.backend(info).cacher.waitFor(rv))) throw tooLargeResourceVersion(rv);
        start = { initialEvents: true, initialEventsEndBookmark: true, bookmarks: true };
      } else if (rv === undefined || rv === 0) {
        if (rv === undefined) await this.backend(info).cacher.waitUntilFresh();
        start = { initialEvents: true, bookmarks: req.allowWatchBookmarks ?? false };
      } else {
        if (!(await this.backend(info).cacher.waitFor(rv))) throw tooLargeResourceVersion(rv);
        start = { initialEvents: false, fromRevision: rv, bookmarks: req.allowWatchBookmarks ?? false };
      }

      let timer: ReturnType<Clock['setTimeout']> | undefined;
      let ended = false;
      const redact = needsRedaction(id, info);
      const wrapped: WatchSink = {
        event: (type, obj) => !ended && sink.event(type, redact ? redactEntry(obj) : obj),
        bookmark: (r, end) => {
          if (!ended) sink.bookmark(r, end);
        },
        end: (err) => {
          if (ended) return;
          ended = true;
          if (timer) this.clock.clearTimeout(timer);
          sink.end(err);
        },
      };
      const cache = this.backend(info).cacher.cache(info);
      const watcher = cache.watch(start, filter, wrapped);
      const stop = () => {
        watcher.stop();
        wrapped.end();
      };
      // As Kubernetes' cacher does before a watch's timeout: a BOOKMARK at the revision the
      // watcher has now seen everything up to, so that it resumes from there. Resuming from its
      // last periodic bookmark instead, every one of ten thousand agents' watches replayed up to
      // 30 s of a rollout's history each time it ended.
      const timedOut = () => {
        if (start.bookmarks) wrapped.bookmark(cache.resourceVersion, false);
        stop();
      };
      if (timeoutSeconds > 0 && !ended) timer = this.clock.setTimeout(timedOut, timeoutSeconds * 1000);
      return { stop };
    });
  }

  /** A node's retained NodeMetrics samples (the last 15 minutes), oldest first. */
  async nodeMetricsHistory(id: Identity, nodeName: string): Promise<KubeObject[]> {
    return this.guard(async () => {
      const info = kindOf('NodeMetrics');
      const name = this.requireName(info, nodeName);
      this.authorize(id, { verb: 'get', info, name });
      const samples = this.metricsHistory.samples(name);
      if (!samples?.length) throw notFound(info.kind, name);
      return samples;
    });
  }

  /**
   * pods/log, the apiserver's half (Kubernetes' `get pods/log`): authorize, read the pod,
   * check the options and choose the container. Says which node's agent to ask, and what.
   */
  async podLogTarget(id: Identity, req: LogsRequest): Promise<PodLogTarget> {
    return this.guard(async () => {
      const info = kindOf('Pod');
      const namespace = this.namespaceOf(info, req.namespace) ?? 'default';
      const name = this.requireName(info, req.name);
      this.authorize(id, { verb: 'get', info, namespace, name, subresource: 'log' });
      const kv = await this.backend(info).storage.get(objectKey(info, namespace, name));
      if (!kv) throw notFound(info.kind, name, namespace);
      const pod = decodeStored(kv.value, kv.modRevision) as Pod;
      nodeCanRead(id, info, pod, 'log');
      const options = podLogOptions(name, req, this.clock.now());
      const container = chooseContainer(pod, req.container ?? '');
      const nodeName = pod.spec?.nodeName;
      if (!nodeName) throw notScheduled(namespace, name);
      return {
        namespace,
        pod: name,
        nodeName,
        container,
        request: { ...options, podUid: pod.metadata?.uid ?? '', container },
      };
    });
  }

  /** pods/log: the log of a pod's container, streamed from its node's agent to `sink`. */
  async logs(id: Identity, req: LogsRequest, sink: LocalLogSink): Promise<LocalLogStream> {
    return this.guard(async () => {
      const target = await this.podLogTarget(id, req);
      if (!this.logTunnels) {
        throw new ApiError(
          'FailedPrecondition',
          'this apiserver has no connection to agents (it runs without the gRPC server); read logs through the control plane',
        );
      }
      return this.logTunnels.openLogs(target, sink);
    });
  }

  // ================================================================== writes

  /**
   * Authorization from what a write request names before its object is read — the kind (the
   * request's `kind`, the wire's typed field, or a typed object's own), the namespace and the
   * name when given — as Kubernetes authorizes a request's URL before it decodes the body. A
   * credential that may not write what the request names never costs a parse; everything is
   * checked again once the object is read.
   */
  authorizeEnvelope(
    id: Identity,
    verb: 'create' | 'update',
    req: WriteRequest,
    subresource?: 'status',
  ): void {
    const meta = req.object?.metadata;
    const kindName = req.kind || req.wireKind || nonEmptyString(req.object?.kind);
    // A typed object's namespace is known (its own, else the request's, else "default"); a
    // manifest's is not until it is read.
    const namespace =
      req.namespace || nonEmptyString(meta?.namespace) || (req.object ? 'default' : undefined);
    const name = req.name || nonEmptyString(meta?.name);
    const attrsFor = (info: KindInfo): RequestAttributes => ({
      verb,
      info,
      namespace: info.namespaced ? namespace : undefined,
      name,
      subresource,
      partial: true,
    });
    if (kindName) {
      const info = resolveKind(kindName);
      if (!info)
        throw new ApiError(
          'BadRequest',
          `unknown kind "${echo(kindName)}"; this server serves: ${knownKinds()}`,
        );
      this.authorize(id, attrsFor(info));
      return;
    }
    const refusedRole = cannotWrite(id.role);
    if (refusedRole)
      throw new ApiError('Forbidden', `user "${echo(id.name)}" cannot ${verb} objects: ${refusedRole}`);
    // Kinds only the apiserver writes are refused to everyone else once the object is read.
    for (const strategy of this.registry.all().filter((s) => !s.info.readOnly)) {
      try {
        this.authorize(id, attrsFor(strategy.info));
      } catch {
        throw new ApiError(
          'Forbidden',
          `user "${echo(id.name)}" may ${verb} only some kinds, and a manifest is not read before its request is authorized: name the manifest's kind in the request (its kind field)`,
        );
      }
    }
  }

  /**
   * A request named by its URL alone — a delete (its DeleteOptions body), pods/eviction,
   * pods/binding — authorized before its body is read, as Kubernetes authorizes a URL. Without
   * a name (deletecollection) it asks whether some object of the kind may be.
   */
  authorizeUrl(
    id: Identity,
    verb: Verb,
    kind: KindName,
    namespace: string | undefined,
    name: string | undefined,
    subresource?: string,
  ): void {
    const info = kindOf(kind);
    this.authorize(id, {
      verb,
      info,
      namespace: this.namespaceOf(info, namespace),
      name,
      subresource,
      partial: name === undefined,
    });
  }

  /**
   * A SelfSubjectAccessReview's question, answered by the same authorizer every request meets:
   * would it allow these attributes, and if not, why.
   */
  wouldAllow(id: Identity, attrs: RequestAttributes): { allowed: boolean; reason?: string } {
    try {
      this.authorize(id, attrs);
      return { allowed: true };
    } catch (err) {
      if (isApiError(err, 'Forbidden')) return { allowed: false, reason: whyForbidden(err) };
      throw err;
    }
  }

  /** The object a write carries: read from its manifest within the parse limits, or as sent; then schema-checked. */
  private async intake(req: WriteRequest): Promise<Intake> {
    const fromManifest = req.manifest !== undefined && req.manifest !== '';
    if (fromManifest && req.object)
      throw new ApiError('BadRequest', 'send either object or manifest, not both');
    const raw = fromManifest
      ? await this.manifests.readObject(req.manifest!)
      : (req.object as Record<string, unknown> | undefined);
    const intake = intakeObject(
      {
        raw,
        wireKind: req.kind || req.wireKind,
        fromManifest,
        fieldValidation: req.fieldValidation,
        warnings: req.warnings,
      },
      this.maxObjectBytes,
    );
    const name = intake.object.metadata?.name;
    if (req.name && name && req.name !== name) {
      throw new ApiError(
        'BadRequest',
        `the request names "${echo(req.name)}" but the object is named "${echo(name)}"; send the same name in both`,
      );
    }
    return intake;
  }

  async create(id: Identity, req: WriteRequest): Promise<KubeObject> {
    return this.guard(async () => {
      this.authorizeEnvelope(id, 'create', req);
      const manager = this.fieldManagerOf(id, req.fieldManager);
      const { info, object: obj } = await this.intake(req);
      const meta: ObjectMeta = (obj.metadata ??= {});
      const namespace = this.namespaceForWrite(info, meta, req.namespace);
      this.authorize(id, { verb: 'create', info, namespace, name: meta.name });
      return this.insert(id, info, obj, namespace, req.dryRun ?? false, (o) =>
        this.recordWrite(info, undefined, o, manager, ''),
      );
    });
  }

  /**
   * Stores a new object the caller may create: server-set metadata, defaults, admission,
   * validation, then `recordFields` (its managed fields), then the store's create.
   */
  private async insert(
    id: Identity,
    info: KindInfo,
    obj: KubeObject,
    namespace: string | undefined,
    dryRun: boolean,
    recordFields: (obj: KubeObject) => void,
  ): Promise<KubeObject> {
    {
      const strategy = this.registry.get(info);
      const meta: ObjectMeta = (obj.metadata ??= {});
      if (meta.resourceVersion) {
        throw invalid(info.kind, meta.name ?? '', [
          {
            field: 'metadata.resourceVersion',
            type: 'FieldValueForbidden',
            message: 'must not be set on create; remove it',
          },
        ]);
      }

      const now = this.clock.now();
      meta.uid = randomUUID();
      meta.creationTimestamp = rfc3339(now);
      delete meta.deletionTimestamp;
      delete meta.deletionGracePeriodSeconds;
      if (strategy.tracksGeneration) meta.generation = 1;
      else delete meta.generation;
      strategy.prepareForCreate?.(obj, { now });
      strategy.applyDefaults?.(obj);
      fillEmptyParts(info, obj);
      await this.admit({ op: 'create', id, info, object: obj });
      this.validateOrThrow(strategy, obj, [
        ...validateObjectMeta(meta, {
          namespaced: info.namespaced,
          nameRule: strategy.nameRule,
          generated: !meta.name,
        }),
        ...strategy.validate(obj),
      ]);
      if (strategy.untrackedFields) delete meta.managedFields;
      else recordFields(obj);
      const generated = !meta.name;
      for (let attempt = 0; ; attempt++) {
        // The base is cut to 58 characters so the name stays within 63 (Kubernetes' SimpleNameGenerator).
        if (generated) meta.name = meta.generateName!.slice(0, MAX_GENERATED_NAME_BASE) + randomSuffix();
        const key = objectKey(info, namespace, meta.name!);
        if (dryRun) return obj;
        try {
          const kv = await this.backend(info).storage.create(key, this.encode(obj));
          return this.stored(info, key, kv);
        } catch (err) {
          if (isStorageError(err, 'KeyExists')) {
            if (generated && attempt < GENERATE_NAME_ATTEMPTS) continue;
            throw new ApiError(
              'AlreadyExists',
              `${info.plural} "${meta.name}" already exists${namespace ? ` in namespace "${namespace}"` : ''}; update it instead or choose another name`,
              {
                kind: info.kind,
                name: meta.name,
                namespace,
              },
            );
          }
          throw err;
        }
      }
    }
  }

  /** Who a write is recorded for in managedFields: the name the request gives, or the caller's. */
  private fieldManagerOf(id: Identity, requested: string | undefined): string {
    if (requested) {
      checkFieldManager(requested);
      return requested;
    }
    if (id.role === 'node') return 'kubelab-agent';
    return id.name.startsWith('system:') ? id.name.slice('system:'.length) : id.name;
  }

  /**
   * Records in `after`'s managedFields what an Update by `manager` changed from `before`
   * (absent on create). managedFields the client sent replace the stored ones (validated); a
   * list of one empty entry drops them all, as in Kubernetes.
   */
  private recordWrite(
    info: KindInfo,
    before: KubeObject | undefined,
    after: KubeObject,
    manager: string,
    subresource: string,
  ): void {
    const meta: ObjectMeta = (after.metadata ??= {});
    const sent = meta.managedFields;
    if (isResetRequest(sent)) {
      delete meta.managedFields;
      return;
    }
    const stored = before?.metadata?.managedFields;
    let base = stored;
    if (sent?.length && !deepEqual(sent, stored)) {
      const errors = validateManagedFields(sent);
      if (errors.length) throw invalid(info.kind, meta.name ?? '', errors);
      // A create's own managed fields are taken as they are (a backup being restored).
      if (!before) return;
      base = sent;
    }
    const entries = decodeManagedFields(base, base === stored);
    const next = recordUpdate(info, before, after, entries, {
      manager,
      subresource,
      now: rfc3339(this.clock.now()),
    });
    // Nothing recorded: the entries stay as they were, encoded.
    setManagedFields(meta, next === entries ? base : encodeManagedFields(next));
  }

  update(id: Identity, req: WriteRequest): Promise<KubeObject> {
    return this.guard(() => this.replace(id, req, ''));
  }

  updateStatus(id: Identity, req: WriteRequest): Promise<KubeObject> {
    return this.guard(() => this.replace(id, req, 'status'));
  }

  private async replace(id: Identity, req: WriteRequest, subresource: '' | 'status'): Promise<KubeObject> {
    this.authorizeEnvelope(id, 'update', req, subresource || undefined);
    const manager = this.fieldManagerOf(id, req.fieldManager);
    const { info, object: incoming } = await this.intake(req);
    const strategy = this.registry.get(info);
    if (subresource === 'status' && !info.hasStatus) {
      throw new ApiError('NotFound', `${info.plural} have no status subresource; use Update`);
    }
    const meta: ObjectMeta = (incoming.metadata ??= {});
    const namespace = this.namespaceForWrite(info, meta, req.namespace);
    const name = this.requireName(info, meta.name);
    this.authorize(id, { verb: 'update', info, namespace, name, subresource: subresource || undefined });
    const precondition = meta.resourceVersion
      ? resourceVersionOf(meta.resourceVersion, 'metadata.resourceVersion')
      : undefined;
    return this.guaranteedUpdate(
      id,
      strategy,
      namespace,
      name,
      precondition,
      req.dryRun ?? false,
      subresource,
      (current) => {
        if (meta.uid && meta.uid !== current.metadata?.uid) {
          throw conflict(
            info,
            name,
            `the uid in the request (${meta.uid}) is not the object's uid (${current.metadata?.uid}); it was deleted and created again`,
          );
        }
        return clone(incoming);
      },
      manager,
    );
  }

  /**
   * Kubernetes' pods/binding: the scheduler's write. Sets spec.nodeName and PodScheduled=True
   * in one compare-and-swap, only while the pod has no node and is not being deleted.
   */
  async bind(id: Identity, req: BindRequest): Promise<KubeObject> {
    return this.guard(async () => {
      const strategy = this.strategyOf('Pod');
      const info = strategy.info;
      const binding = req.binding ?? {};
      const meta = binding.metadata ?? {};
      const namespace = this.namespaceOf(info, meta.namespace || req.namespace);
      const name = this.requireName(info, meta.name);
      this.authorize(id, { verb: 'create', info, namespace, name, subresource: 'binding' });
      const target = binding.target ?? {};
      const errors: FieldError[] = [];
      if (target.kind && target.kind !== 'Node') {
        errors.push(invalidField('target.kind', target.kind, 'must be "Node"'));
      }
      if (!target.name) errors.push(requiredField('target.name'));
      else
        for (const m of isDNS1123Subdomain(target.name))
          errors.push(invalidField('target.name', target.name, m));
      if (errors.length) throw invalid('Binding', name, errors);
      return this.guaranteedUpdate(
        id,
        strategy,
        namespace,
        name,
        undefined,
        req.dryRun ?? false,
        'binding',
        (current) => {
          const pod = clone(current) as Pod;
          if (meta.uid && meta.uid !== pod.metadata?.uid) {
            throw conflict(
              info,
              name,
              `the uid in the binding (${meta.uid}) is not the pod's (${pod.metadata?.uid}); it was deleted and created again`,
            );
          }
          if (pod.metadata?.deletionTimestamp) {
            throw conflict(info, name, `pod ${name} is being deleted, cannot be assigned to a host`);
          }
          if (pod.spec?.nodeName) {
            throw conflict(info, name, `pod ${name} is already assigned to node "${pod.spec.nodeName}"`);
          }
          (pod.spec ??= {}).nodeName = target.name;
          if (meta.annotations)
            pod.metadata = {
              ...pod.metadata,
              annotations: { ...pod.metadata?.annotations, ...meta.annotations },
            };
          const status = (pod.status ??= {});
          const conditions = (status.conditions ?? []).filter((c) => c.type !== 'PodScheduled');
          status.conditions = [
            ...conditions,
            { type: 'PodScheduled', status: 'True', lastTransitionTime: rfc3339(this.clock.now()) },
          ];
          return pod;
        },
      );
    });
  }

  async patch(id: Identity, req: PatchRequest): Promise<KubeObject> {
    return (await this.patchOrApply(id, req)).object;
  }

  /**
   * A patch; for server-side apply ("apply"), `created` tells whether the apply made the
   * object (REST answers 201 then).
   */
  async patchOrApply(id: Identity, req: PatchRequest): Promise<{ object: KubeObject; created: boolean }> {
    return this.guard(async () => {
      const strategy = this.strategyOf(req.kind);
      const info = strategy.info;
      const namespace = this.namespaceOf(info, req.namespace);
      const name = this.requireName(info, req.name);
      const subresource = req.subresource === 'status' ? 'status' : '';
      if (req.subresource && req.subresource !== 'status') {
        throw new ApiError(
          'BadRequest',
          `subresource "${req.subresource}" is not supported; use "" or "status"`,
        );
      }
      if (subresource === 'status' && !info.hasStatus)
        throw new ApiError('NotFound', `${info.plural} have no status subresource`);
      this.authorize(id, { verb: 'patch', info, namespace, name, subresource: subresource || undefined });
      const patchType = req.patchType ?? '';
      if (patchType === 'apply' || patchType === 'application/apply-patch+yaml')
        return this.serverSideApply(id, req, strategy, namespace, name, subresource);
      if (req.force)
        throw new ApiError(
          'BadRequest',
          'force may only be set for server-side apply (patchType "apply"); leave it out of other patches',
        );
      const manager = this.fieldManagerOf(id, req.fieldManager);
      let document: unknown;
      try {
        document = readPatch(patchType, req.patch ?? '');
      } catch (err) {
        throw parseApiError(err);
      }
      const pinned = pinnedResourceVersion(patchType, document);
      const object = await this.guaranteedUpdate(
        id,
        strategy,
        namespace,
        name,
        pinned,
        req.dryRun ?? false,
        subresource,
        (current) => {
          const patched = applyPatch(patchType, clone(current), document, info.kind);
          const { object } = intakeObject(
            { raw: patched as Record<string, unknown>, wireKind: info.kind },
            this.maxObjectBytes,
          );
          const m = (object.metadata ??= {});
          if (m.name !== name || (info.namespaced && m.namespace !== namespace)) {
            throw invalid(info.kind, name, [
              {
                field: 'metadata.name',
                type: 'FieldValueForbidden',
                message: 'a patch may not change the name or namespace',
              },
            ]);
          }
          return object;
        },
        manager,
      );
      return { object, created: false };
    });
  }

  /**
   * Server-side apply: the patch is the manager's whole intent for the object. Merged onto
   * the live object with field ownership (fieldmanager/managers.ts); an absent object is
   * created, if the caller may create it.
   */
  private async serverSideApply(
    id: Identity,
    req: PatchRequest,
    strategy: Strategy,
    namespace: string | undefined,
    name: string,
    subresource: '' | 'status',
  ): Promise<{ object: KubeObject; created: boolean }> {
    const info = strategy.info;
    if (!req.fieldManager)
      throw invalid('PatchOptions', '', [
        {
          field: 'fieldManager',
          type: 'FieldValueRequired',
          message: 'is required for apply patch; name the tool or person applying, e.g. fieldManager=my-tool',
        },
      ]);
    const manager = this.fieldManagerOf(id, req.fieldManager);
    const raw = await this.manifests.readObject(req.patch ?? '');
    if (typeof raw.kind !== 'string' || !raw.kind)
      throw new ApiError(
        'BadRequest',
        `kind is required in an applied configuration; for ${info.plural} use kind: ${info.kind} (apiVersion: ${info.apiVersion})`,
      );
    const { object: config } = intakeObject(
      { raw, wireKind: info.kind, fromManifest: true },
      this.maxObjectBytes,
    );
    const cm: ObjectMeta = (config.metadata ??= {});
    if (cm.managedFields !== undefined)
      throw new ApiError(
        'BadRequest',
        'metadata.managedFields must be nil in an applied configuration; remove it',
      );
    if (cm.name !== undefined && cm.name !== name)
      throw new ApiError(
        'BadRequest',
        `the name of the object (${echo(cm.name)}) does not match the name on the URL (${echo(name)}); send the same name in both`,
      );
    if (info.namespaced && cm.namespace !== undefined && cm.namespace !== namespace)
      throw new ApiError(
        'BadRequest',
        `the namespace of the object (${echo(cm.namespace)}) does not match the namespace on the request (${namespace}); send the same namespace in both`,
      );
    cm.name = name;
    if (info.namespaced) cm.namespace = namespace;
    // A resourceVersion in the configuration is a precondition, never a field anyone owns.
    const precondition = cm.resourceVersion
      ? resourceVersionOf(cm.resourceVersion, 'metadata.resourceVersion')
      : undefined;
    delete cm.resourceVersion;
    const dryRun = req.dryRun ?? false;
    const force = req.force ?? false;
    const writer = { manager, subresource, now: rfc3339(this.clock.now()) };
    for (let attempt = 0; ; attempt++) {
      try {
        const object = await this.guaranteedUpdate(
          id,
          strategy,
          namespace,
          name,
          precondition,
          dryRun,
          subresource,
          (current) => {
            const stored = current.metadata?.managedFields;
            const applied = apply(info, current, config, decodeManagedFields(stored, true), writer, force);
            setManagedFields((applied.object.metadata ??= {}), encodeManagedFields(applied.entries));
            followLastApplied(applied.object, config, manager);
            return applied.object;
          },
        );
        return { object, created: false };
      } catch (err) {
        // Absent: an apply creates it (a status apply, or one pinned to a version, cannot).
        if (!isApiError(err, 'NotFound') || subresource || precondition !== undefined || attempt > 0)
          throw err;
      }
      this.authorize(id, { verb: 'create', info, namespace, name });
      const applied = apply(info, undefined, config, [], writer, force);
      try {
        const object = await this.insert(id, info, applied.object, namespace, dryRun, (o) =>
          setManagedFields((o.metadata ??= {}), encodeManagedFields(applied.entries)),
        );
        return { object, created: true };
      } catch (err) {
        // Created meanwhile by someone else: apply onto theirs.
        if (!isApiError(err, 'AlreadyExists')) throw err;
      }
    }
  }

  /**
   * The read-modify-write loop of every update, as Kubernetes' GuaranteedUpdate: build the new
   * object on the current one, write it with compare-and-swap, and on a conflict build again
   * on the store's newer copy, unless the client pinned a resourceVersion.
   *
   * The first attempt starts from the watch cache's copy, which saves a read but may lag the
   * store: on etcd the cache learns even this replica's writes a moment after they are
   * acknowledged, and another replica's whenever its watch delivers them. So nothing decided on
   * that copy is final until the store confirms it was current: a failed precondition, a failed
   * build (a JSON patch's `test`, a `remove` of a field added meanwhile, validation, admission)
   * or "nothing to change" sends the loop back to the store once, and the answer stands only if
   * the store's copy is the same revision.
   */
  private async guaranteedUpdate(
    id: Identity,
    strategy: Strategy,
    namespace: string | undefined,
    name: string,
    precondition: number | undefined,
    dryRun: boolean,
    subresource: Subresource,
    build: (current: KubeObject) => KubeObject,
    /** Records the write in managedFields as this manager's Update (undefined: build did). */
    manager?: string,
  ): Promise<KubeObject> {
    const info = strategy.info;
    const key = objectKey(info, namespace, name);
    const { storage, cacher } = this.backend(info);
    // A dry run writes nothing that could catch a stale copy, so it reads the store (as
    // Kubernetes' DryRunnableStorage does).
    const cached = dryRun ? undefined : cacher.cache(info).get(key);
    let current = cached
      ? { object: cached.object, rv: cached.rv }
      : await this.readStored(storage, info, key, namespace, name);
    let isCurrent = !cached;
    /** Re-reads the store; true when the copy used so far was already its latest. */
    const refresh = async (): Promise<boolean> => {
      const seen = current.rv;
      const fresh = await this.readStored(storage, info, key, namespace, name);
      isCurrent = true;
      if (fresh.rv === seen) return true;
      current = fresh;
      return false;
    };
    for (let conflicts = 0; ;) {
      if (precondition !== undefined && precondition !== current.rv) {
        if (!isCurrent && !(await refresh())) continue;
        throw conflict(
          info,
          name,
          'the object has been modified; get the latest version, apply your changes to it and try again',
        );
      }
      let next: KubeObject;
      let outcome: 'write' | 'unchanged' | 'delete';
      try {
        next = build(current.object);
        outcome = await this.prepareUpdate(id, strategy, next, current.object, subresource, manager);
      } catch (err) {
        if (!isCurrent && !(await refresh())) continue;
        throw err;
      }
      if (outcome === 'unchanged') {
        // Only the store can say the object already is what the client asked for.
        if (!isCurrent && !(await refresh())) continue;
        return current.object;
      }
      if (dryRun) return next;
      try {
        if (outcome === 'delete') {
          const gone = await storage.delete(key, current.rv);
          return decodeStored(gone.value, gone.modRevision);
        }
        const kv = await storage.update(key, this.encode(next), current.rv);
        return this.stored(info, key, kv);
      } catch (err) {
        if (isStorageError(err, 'Conflict') || isStorageError(err, 'NotFound')) {
          if (++conflicts > 20) throw conflict(info, name, 'the object keeps changing; try again');
          current = await this.readStored(storage, info, key, namespace, name);
          isCurrent = true;
          continue;
        }
        throw err;
      }
    }
  }

  /** Carries over what the client may not change, then admission and validation. */
  private async prepareUpdate(
    id: Identity,
    strategy: Strategy,
    next: KubeObject,
    current: KubeObject,
    subresource: Subresource,
    manager: string | undefined,
  ): Promise<'write' | 'unchanged' | 'delete'> {
    const info = strategy.info;
    const cur = current as KubeObject & { spec?: unknown; status?: unknown };
    const n = next as KubeObject & { spec?: unknown; status?: unknown };
    const curMeta = current.metadata ?? {};
    if (subresource === 'status') {
      // A status write changes status only (Kubernetes ResetObjectMetaForStatus).
      const status = n.status;
      // An apply (no manager here) computed the managed fields itself; an update's are recorded below.
      const applied = manager === undefined ? n.metadata?.managedFields : undefined;
      const annotations = strategy.statusWritesAnnotations ? n.metadata?.annotations : undefined;
      for (const k of Object.keys(n)) delete (n as Record<string, unknown>)[k];
      const { status: _replaced, ...unchanged } = cur;
      Object.assign(n, clone(unchanged));
      if (status !== undefined) n.status = status;
      if (strategy.statusWritesAnnotations) {
        n.metadata ??= {};
        if (annotations) n.metadata.annotations = annotations;
        else delete n.metadata.annotations;
      }
      if (applied) n.metadata = { ...n.metadata, managedFields: applied };
      else if (manager === undefined) delete n.metadata?.managedFields;
    } else if (info.hasStatus && subresource !== 'binding') {
      if (cur.status === undefined) delete n.status;
      else n.status = clone(cur.status);
    }
    const m: ObjectMeta = (next.metadata ??= {});
    // System-managed metadata always comes from the stored object.
    for (const k of [
      'uid',
      'creationTimestamp',
      'deletionTimestamp',
      'deletionGracePeriodSeconds',
      'generation',
      'generateName',
    ] as const) {
      if (curMeta[k] === undefined) delete m[k];
      else (m as Record<string, unknown>)[k] = curMeta[k];
    }
    delete m.resourceVersion;

    strategy.applyDefaults?.(next);
    if (subresource === '') strategy.prepareForUpdate?.(next, current);
    fillEmptyParts(info, next);
    if (
      strategy.tracksGeneration &&
      subresource === '' &&
      (!deepEqual(n.spec, cur.spec) ||
        (strategy.annotationsBumpGeneration && !deepEqual(m.annotations ?? {}, curMeta.annotations ?? {})))
    )
      m.generation = (curMeta.generation ?? 1) + 1;
    await this.admit({ op: 'update', id, info, object: next, old: current, subresource });
    const errors: FieldError[] = [
      ...validateObjectMeta(m, {
        namespaced: info.namespaced,
        nameRule: strategy.nameRule,
        generated: false,
      }),
      ...validateObjectMetaUpdate(m, curMeta),
      ...strategy.validate(next),
      // A binding is itself the one permitted change of a pod's spec.nodeName.
      ...(subresource === 'status'
        ? (strategy.validateStatus?.(next, current) ?? [])
        : subresource === 'binding'
          ? []
          : (strategy.validateUpdate?.(next, current) ?? [])),
    ];
    this.validateOrThrow(strategy, next, errors);
    if (strategy.untrackedFields) delete m.managedFields;
    else if (manager !== undefined)
      this.recordWrite(info, current, next, manager, subresource === 'status' ? 'status' : '');

    const { resourceVersion: _rv, ...curMetaNoRv } = curMeta;
    if (deepEqual({ ...n, metadata: m }, { ...cur, metadata: curMetaNoRv })) return 'unchanged';
    if (
      m.deletionTimestamp &&
      !m.finalizers?.length &&
      (strategy.readyToDelete?.(next) ?? (m.deletionGracePeriodSeconds ?? 0) === 0)
    ) {
      return 'delete';
    }
    return 'write';
  }

  async delete(id: Identity, req: DeleteRequest): Promise<{ object: KubeObject; deleted: boolean }> {
    return this.deleteAuthorizedAs(id, req, 'delete');
  }

  /**
   * pods/eviction (policy/v1 Eviction, what `kubectl drain` sends): a delete the caller may make
   * with `create pods/eviction`. Kubernetes first checks PodDisruptionBudgets; kubelab has none,
   * so every eviction is allowed, as on a cluster without budgets.
   */
  async evict(
    id: Identity,
    req: Omit<DeleteRequest, 'kind'>,
  ): Promise<{ object: KubeObject; deleted: boolean }> {
    return this.deleteAuthorizedAs(id, { ...req, kind: 'Pod' }, 'eviction');
  }

  private async deleteAuthorizedAs(
    id: Identity,
    req: DeleteRequest,
    as: 'delete' | 'eviction',
  ): Promise<{ object: KubeObject; deleted: boolean }> {
    return this.guard(async () => {
      const strategy = this.strategyOf(req.kind);
      const info = strategy.info;
      const namespace = this.namespaceOf(info, req.namespace);
      const name = this.requireName(info, req.name);
      if (as === 'eviction')
        this.authorize(id, { verb: 'create', info, namespace, name, subresource: 'eviction' });
      else this.authorize(id, { verb: 'delete', info, namespace, name });
      const policy = propagationPolicyOf(req.propagationPolicy);
      if (req.gracePeriodSeconds !== undefined && req.gracePeriodSeconds < 0) {
        throw new ApiError('BadRequest', 'gracePeriodSeconds must not be negative; use 0 to delete now');
      }
      const key = objectKey(info, namespace, name);
      for (let attempt = 0; ; attempt++) {
        const kv = await this.backend(info).storage.get(key);
        if (!kv) throw notFound(info.kind, name, namespace);
        const current = decodeStored(kv.value, kv.modRevision);
        const meta = current.metadata ?? {};
        const pre = req.preconditions;
        if (pre?.uid !== undefined && pre.uid !== meta.uid) {
          throw conflict(
            info,
            name,
            `precondition failed: uid in precondition ${pre.uid}, uid of the object ${meta.uid}`,
          );
        }
        if (pre?.resourceVersion !== undefined && pre.resourceVersion !== meta.resourceVersion) {
          throw conflict(
            info,
            name,
            `precondition failed: resourceVersion in precondition ${pre.resourceVersion}, resourceVersion of the object ${meta.resourceVersion}`,
          );
        }
        await this.admitDeletion(id, info, current);

        const next = this.planDeletion(strategy, current, req.gracePeriodSeconds, policy);
        try {
          if (next === 'delete') {
            if (req.dryRun) return { object: current, deleted: true };
            const gone = await this.backend(info).storage.delete(key, kv.modRevision);
            return { object: decodeStored(gone.value, gone.modRevision), deleted: true };
          }
          if (next === 'unchanged' || req.dryRun)
            return { object: next === 'unchanged' ? current : next, deleted: false };
          const updated = await this.backend(info).storage.update(key, this.encode(next), kv.modRevision);
          return { object: decodeStored(updated.value, updated.modRevision), deleted: false };
        } catch (err) {
          if ((isStorageError(err, 'Conflict') || isStorageError(err, 'NotFound')) && attempt < 20) continue;
          throw err;
        }
      }
    });
  }

  /**
   * Decides what a delete does (Kubernetes' BeforeDelete): remove now, or mark with a
   * deletionTimestamp while a grace period, the kind's own finalization or finalizers hold it.
   */
  private planDeletion(
    strategy: Strategy,
    current: KubeObject,
    requestedGrace: number | undefined,
    policy: 'Background' | 'Foreground' | 'Orphan',
  ): KubeObject | 'delete' | 'unchanged' {
    const now = this.clock.now();
    const next = clone(current);
    const meta: ObjectMeta = (next.metadata ??= {});
    delete meta.resourceVersion;
    const finalizers = new Set(meta.finalizers ?? []);
    if (policy === 'Orphan') finalizers.add('orphan');
    if (policy === 'Foreground') finalizers.add('foregroundDeletion');
    const finalizersChanged = finalizers.size !== (meta.finalizers?.length ?? 0);
    if (finalizers.size) meta.finalizers = [...finalizers];

    if (strategy.beginDeletion) {
      if (meta.deletionTimestamp && !finalizersChanged) return 'unchanged';
      if (!meta.deletionTimestamp) {
        meta.deletionTimestamp = rfc3339(now);
        meta.deletionGracePeriodSeconds = 0;
      }
      const waits = strategy.beginDeletion(next, { now });
      return waits || finalizers.size ? next : 'delete';
    }

    const grace = strategy.gracePeriod ? strategy.gracePeriod(current, requestedGrace) : 0;
    if (meta.deletionTimestamp) {
      const currentGrace = meta.deletionGracePeriodSeconds ?? 0;
      if (grace >= currentGrace && !finalizersChanged) return 'unchanged';
      if (grace < currentGrace) {
        // A shorter grace period wins (e.g. the agent's final delete with 0).
        meta.deletionGracePeriodSeconds = grace;
        const shortened = now + grace * 1000;
        if (shortened < Date.parse(meta.deletionTimestamp)) meta.deletionTimestamp = rfc3339(shortened);
      }
      if (grace === 0 && finalizers.size === 0) return 'delete';
      return next;
    }
    if (grace > 0 || finalizers.size) {
      meta.deletionTimestamp = rfc3339(now + grace * 1000);
      meta.deletionGracePeriodSeconds = grace;
      return next;
    }
    return 'delete';
  }

  // ================================================================== helpers

  private async admit(ctx: Omit<AdmissionContext, 'lookup' | 'now'>): Promise<void> {
    // Object.assign, not a spread that adds keys: in Node 20's V8 the latter makes a hidden
    // class per call, which lives until the next mark-compact clears it.
    const full: AdmissionContext = Object.assign({}, ctx, {
      now: this.clock.now(),
      lookup: (info: KindInfo, ns: string | undefined, name: string) => this.lookup(info, ns, name),
    });
    if (ctx.op === 'create') await admitCreate(full);
    await nodeRestriction(full);
    for (const plugin of this.extraAdmission) await plugin(full);
  }

  private async admitDeletion(id: Identity, info: KindInfo, object: KubeObject): Promise<void> {
    const ctx: AdmissionContext = {
      op: 'delete',
      id,
      info,
      object,
      now: this.clock.now(),
      lookup: (i, ns, n) => this.lookup(i, ns, n),
    };
    admitDelete(ctx);
    await nodeRestriction(ctx);
    for (const plugin of this.extraAdmission) await plugin(ctx);
  }

  /** Reads an object for admission: the cache first, the store when the cache lacks it. */
  private async lookup(
    info: KindInfo,
    namespace: string | undefined,
    name: string,
  ): Promise<KubeObject | undefined> {
    const key = objectKey(info, namespace, name);
    const cached = this.backend(info).cacher.cache(info).get(key);
    if (cached) return cached.object;
    const kv = await this.backend(info).storage.get(key);
    return kv ? decodeStored(kv.value, kv.modRevision) : undefined;
  }

  /** An object as the store holds it now, decoded, with its revision. */
  private async readStored(
    storage: Storage,
    info: KindInfo,
    key: string,
    namespace: string | undefined,
    name: string,
  ): Promise<{ object: KubeObject; rv: number }> {
    const kv = await storage.get(key);
    if (!kv) throw notFound(info.kind, name, namespace);
    return { object: decodeStored(kv.value, kv.modRevision), rv: kv.modRevision };
  }

  /**
   * The object a write stored: the watch cache's copy when it already has this revision (the
   * SQLite store delivers the event before acknowledging the write), so the reply and every
   * watcher share one decoded — and one encoded — object.
   */
  private stored(info: KindInfo, key: string, kv: KeyValue): KubeObject {
    const cached = this.backend(info).cacher.cache(info).get(key);
    return cached && cached.rv === kv.modRevision ? cached.object : decodeStored(kv.value, kv.modRevision);
  }

  /** The pods of a namespace bound to a node, from the watch cache. */
  private podsBoundTo(nodeName: string | undefined, namespace: string | undefined): Pod[] {
    const info = kindOf('Pod');
    return this.backend(info)
      .cacher.cache(info)
      .list({ namespace })
      .items.map((i) => i.object as Pod)
      .filter((p) => p.spec?.nodeName === nodeName);
  }

  private encode(obj: KubeObject): string {
    const json = encodeForStore(obj);
    if (json.length > this.maxObjectBytes) throw tooLarge(json.length, this.maxObjectBytes);
    return json;
  }

  private validateOrThrow(strategy: Strategy, obj: KubeObject, errors: FieldError[]): void {
    if (errors.length)
      throw invalid(strategy.info.kind, obj.metadata?.name ?? obj.metadata?.generateName ?? '', errors);
  }

  private strategyOf(kind: string | undefined): Strategy {
    return this.registry.get(kindOf(kind));
  }

  private filterOf(
    strategy: Strategy,
    namespace: string | undefined,
    labels: string | undefined,
    fields: string | undefined,
  ): WatchFilter {
    return {
      namespace,
      labels: labelSelectorOf(labels),
      fields: fieldSelectorOf(fields, strategy.info, this.registry.selectableFields(strategy)),
    };
  }

  private namespaceOf(info: KindInfo, requested: string | undefined): string | undefined {
    return info.namespaced ? requested || 'default' : undefined;
  }

  /** The namespace a written object lives in: its own, else the request's, else "default". */
  private namespaceForWrite(
    info: KindInfo,
    meta: ObjectMeta,
    requested: string | undefined,
  ): string | undefined {
    if (!info.namespaced) {
      delete meta.namespace;
      return undefined;
    }
    if (meta.namespace && requested && meta.namespace !== requested) {
      throw new ApiError(
        'BadRequest',
        `the namespace of the object (${meta.namespace}) does not match the namespace of the request (${requested}); drop one of them`,
      );
    }
    meta.namespace = meta.namespace || requested || 'default';
    return meta.namespace;
  }

  private requireName(info: KindInfo, name: string | undefined): string {
    if (!name) throw new ApiError('BadRequest', `a ${info.kind} name is required`);
    return name;
  }

  /** Runs a request, turning anything that is not an ApiError into one (the server never crashes on input). */
  private async guard<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw toApiError(err, this.logger);
    }
  }
}

/**
 * Kubernetes always serializes spec and status (Go structs), and JSON patches written for it
 * rely on them existing: an object here always has them too.
 */
function fillEmptyParts(info: KindInfo, obj: KubeObject): void {
  const o = obj as KubeObject & { spec?: object; status?: object };
  if (fieldNames(info.messageType).includes('spec')) o.spec ??= {};
  if (info.hasStatus) o.status ??= {};
}

const MAX_GENERATED_NAME_BASE = 58;

function randomSuffix(): string {
  let s = '';
  for (let i = 0; i < 5; i++) s += NAME_CHARS[Math.floor(Math.random() * NAME_CHARS.length)];
  return s;
}

function conflict(info: KindInfo, name: string, why: string): ApiError {
  return new ApiError('Conflict', `Operation cannot be fulfilled on ${info.plural} "${name}": ${why}`, {
    kind: info.kind,
    name,
  });
}

/** The store's current revision, or undefined when it cannot answer (the caller's error stands). */
async function revisionIfUp(storage: Storage): Promise<number | undefined> {
  try {
    return await storage.currentRevision();
  } catch {
    return undefined;
  }
}

/** An Exact list at a revision the store has not reached: Kubernetes' words, without its retry. */
function exactBeyondStore(rv: number, current: number): ApiError {
  return new ApiError(
    'BadRequest',
    `too large resource version: ${rv}, current: ${current}; resourceVersionMatch=Exact needs a resourceVersion the server returned (list without resourceVersion for the latest)`,
  );
}

function tooLargeResourceVersion(rv: number): ApiError {
  return new ApiError(
    'Timeout',
    `too large resource version: ${rv} is newer than what the server has seen; retry in a moment`,
    {
      retryAfterSeconds: 1,
    },
  );
}

/** A merge patch that sets metadata.resourceVersion pins it, like Kubernetes. */
function nonEmptyString(v: unknown): string | undefined {
  return typeof v === 'string' && v ? v : undefined;
}

/** managedFields as encoded; none is no field at all, as Kubernetes leaves it out. */
function setManagedFields(meta: ObjectMeta, entries: ObjectMeta['managedFields']): void {
  if (entries?.length) meta.managedFields = entries;
  else delete meta.managedFields;
}

function pinnedResourceVersion(patchType: string, document: unknown): number | undefined {
  const kind = patchKind(patchType);
  if ((kind !== 'merge' && kind !== 'strategic') || typeof document !== 'object' || document === null)
    return undefined;
  const rv = (document as { metadata?: { resourceVersion?: unknown } }).metadata?.resourceVersion;
  return typeof rv === 'string' && rv ? resourceVersionOf(rv, 'metadata.resourceVersion') : undefined;
}

export function toApiError(err: unknown, logger?: Logger): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof StorageError) {
    switch (err.code) {
      case 'NotFound':
        return new ApiError('NotFound', err.message);
      case 'KeyExists':
        return new ApiError('AlreadyExists', err.message);
      case 'Conflict':
        return new ApiError('Conflict', err.message);
      case 'Compacted':
        return new ApiError('Expired', err.message);
      case 'TooLarge':
        return new ApiError('RequestEntityTooLarge', err.message);
      default:
        return new ApiError('Unavailable', `the store is unavailable: ${err.message}`);
    }
  }
  logger?.error({ err: (err as Error)?.stack ?? String(err) }, 'unexpected error while serving a request');
  return new ApiError(
    'InternalError',
    `internal error: ${(err as Error)?.message ?? String(err)}; the server logged the details`,
  );
}

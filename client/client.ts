/**
 * The typed client every participant uses: one interface, two transports (in-process for the
 * controllers inside the control plane, gRPC for everyone else). Reads retry transient
 * failures with backoff; writes retry only where a retry cannot apply a change twice.
 */
import { ApiError } from './api/errors.js';
import { kindInfo, resolveKind } from './api/kinds.js';
import type { LocalLogSink, LocalLogStream, LocalWatch, LocalWatchSink, WriteRequest } from './api/local.js';
import type {
  BindRequest,
  DeleteRequest,
  GetRequest,
  KindMap,
  KindName,
  KubeObject,
  ListRequest,
  ListResult,
  LogsRequest,
  PatchRequest,
  Pod,
  WatchEvent,
  WatchRequest,
} from './api/types.js';
import { LogQueue, type LogStream } from './logstream.js';
import { resendModeOf } from './resend.js';
import { retrying, type RetryPolicy } from './retry.js';

export type { LogStream } from './logstream.js';

/** What a transport carries: the apiserver's request surface, minus the identity. */
export interface Transport {
  get(req: GetRequest): Promise<KubeObject>;
  list(req: ListRequest): Promise<ListResult>;
  watch(req: WatchRequest, sink: LocalWatchSink): Promise<LocalWatch>;
  create(req: WriteRequest): Promise<KubeObject>;
  update(req: WriteRequest): Promise<KubeObject>;
  updateStatus(req: WriteRequest): Promise<KubeObject>;
  patch(req: PatchRequest): Promise<KubeObject>;
  delete(req: DeleteRequest): Promise<{ object: KubeObject; deleted: boolean }>;
  bind(req: BindRequest): Promise<KubeObject>;
  /** Opens a pod's log; resolves once it is open, the bytes then go to `sink`. */
  logs(req: LogsRequest, sink: LocalLogSink): Promise<LocalLogStream>;
  /** Drops the connection and dials again (a connection that went silent). */
  reconnect?(): void;
  close(): void;
}

export interface GetOptions {
  namespace?: string;
  /** "" (default) reads the latest state; "0" accepts the watch cache's copy. */
  resourceVersion?: string;
}

export interface ListOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
  resourceVersion?: string;
  resourceVersionMatch?: 'NotOlderThan' | 'Exact';
}

export interface WatchOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** "" or "0": current state first as ADDED; a revision: every change after it. */
  resourceVersion?: string;
  allowWatchBookmarks?: boolean;
  sendInitialEvents?: boolean;
  timeoutSeconds?: number;
}

export interface WriteOptions {
  namespace?: string;
  dryRun?: boolean;
  /** Who makes the change, recorded in metadata.managedFields (default: the client's own). */
  fieldManager?: string;
}

export interface PatchOptions extends WriteOptions {
  /**
   * "merge" (JSON merge patch, default), "json" (JSON patch), "strategic" (Kubernetes'
   * strategic merge patch) or "apply" (server-side apply: the patch is the whole object as
   * this fieldManager wants it; creates it when absent).
   */
  type?: 'merge' | 'json' | 'strategic' | 'apply';
  subresource?: 'status';
  /** "apply" only: take over fields other managers own instead of failing with a conflict. */
  force?: boolean;
}

export interface BindOptions {
  /** Bind only this incarnation of the pod (a pod deleted and created again has a new uid). */
  uid?: string;
  dryRun?: boolean;
}

/** Kubernetes' PodLogOptions (`kubectl logs` flags in brackets). */
export interface LogsOptions {
  /** Which container; may be left out when the pod has only one [-c]. */
  container?: string;
  /** Only this many lines from the end [--tail]. */
  tailLines?: number;
  /** Keep streaming new lines until stopped [-f]. */
  follow?: boolean;
  /** The container's previous instance, before its last restart [-p]. */
  previous?: boolean;
  /** Prefix each line with its RFC 3339 timestamp [--timestamps]. */
  timestamps?: boolean;
  /** Only lines of the last N seconds [--since]; not with sinceTime. */
  sinceSeconds?: number;
  /** Only lines at or after this RFC 3339 time [--since-time]; not with sinceSeconds. */
  sinceTime?: string;
  /** Stop after this many bytes [--limit-bytes]. */
  limitBytes?: number;
}

export interface DeleteOptions {
  namespace?: string;
  gracePeriodSeconds?: number;
  preconditions?: { uid?: string; resourceVersion?: string };
  propagationPolicy?: 'Background' | 'Foreground' | 'Orphan';
  dryRun?: boolean;
}

/**
 * A running watch: iterate it with `for await`. The iteration ends when the server ends the
 * watch normally (timeout) and throws the ApiError when it ends with one (e.g. Expired:
 * list again). `stop()` ends it from this side.
 */
export interface Watch<T> extends AsyncIterable<WatchEvent<T>> {
  stop(): void;
}

export interface Client {
  get<K extends KindName>(kind: K, name: string, options?: GetOptions): Promise<KindMap[K]>;
  list<K extends KindName>(kind: K, options?: ListOptions): Promise<ListResult<KindMap[K]>>;
  watch<K extends KindName>(kind: K, options?: WatchOptions): Promise<Watch<KindMap[K]>>;
  /** An object literal's `kind` picks the result type; a typed object keeps its own. */
  create<K extends KindName>(object: KindMap[K] & { kind: K }, options?: WriteOptions): Promise<KindMap[K]>;
  create<T extends KubeObject>(object: T, options?: WriteOptions): Promise<T>;
  /** Creates from a Kubernetes JSON or YAML document (unknown fields are rejected). */
  createManifest(manifest: string, options?: WriteOptions): Promise<KubeObject>;
  /** An object literal's `kind` picks the result type; a typed object keeps its own. */
  update<K extends KindName>(object: KindMap[K] & { kind: K }, options?: WriteOptions): Promise<KindMap[K]>;
  update<T extends KubeObject>(object: T, options?: WriteOptions): Promise<T>;
  /** An object literal's `kind` picks the result type; a typed object keeps its own. */
  updateStatus<K extends KindName>(
    object: KindMap[K] & { kind: K },
    options?: WriteOptions,
  ): Promise<KindMap[K]>;
  updateStatus<T extends KubeObject>(object: T, options?: WriteOptions): Promise<T>;
  patch<K extends KindName>(
    kind: K,
    name: string,
    patch: unknown,
    options?: PatchOptions,
  ): Promise<KindMap[K]>;
  delete<K extends KindName>(
    kind: K,
    name: string,
    options?: DeleteOptions,
  ): Promise<{ object: KindMap[K]; deleted: boolean }>;
  /**
   * Assigns a pending pod to a node (the scheduler's write): sets spec.nodeName and the
   * PodScheduled condition if the pod has no node yet; a Conflict error if it has one.
   */
  bind(namespace: string, podName: string, nodeName: string, options?: BindOptions): Promise<Pod>;
  /**
   * A container's log (Kubernetes' pods/log), relayed from the pod's agent: resolves once the
   * stream is open (errors: the pod is missing, not scheduled, its agent not connected, the
   * container ambiguous), then yields the bytes. Read it promptly: a reader that falls far
   * behind a fast log has its stream ended with a TooManyRequests error.
   */
  logs(namespace: string, pod: string, options?: LogsOptions): Promise<LogStream>;
  /**
   * Drops the connection and dials again: for a connection that went silent without closing
   * (a half-open TCP connection after sleep or a network change). In-process: nothing to do.
   */
  reconnect(): void;
  close(): void;
}

/** A watch's events, buffered until the consumer takes them. */
export class WatchQueue<T> implements Watch<T>, LocalWatchSink {
  private events: WatchEvent<T>[] = [];
  /** Index of the next event to hand out: shift() would copy the array on every event. */
  private head = 0;
  private waiting: (() => void) | undefined;
  private ended = false;
  private error: ApiError | undefined;
  private handle: LocalWatch | undefined;

  constructor(private readonly maxBuffered = 1_000_000) {}

  attach(handle: LocalWatch): void {
    this.handle = handle;
    if (this.ended) handle.stop();
  }

  event(type: 'ADDED' | 'MODIFIED' | 'DELETED', object: KubeObject): boolean {
    if (this.ended) return false;
    this.events.push({ type, object: object as T });
    this.wake();
    return this.events.length - this.head < this.maxBuffered;
  }

  bookmark(resourceVersion: string, initialEventsEnd: boolean): void {
    if (this.ended) return;
    const object = {
      metadata: {
        resourceVersion,
        ...(initialEventsEnd ? { annotations: { 'k8s.io/initial-events-end': 'true' } } : {}),
      },
    };
    this.events.push({ type: 'BOOKMARK', object: object as T });
    this.wake();
  }

  end(err?: ApiError): void {
    if (this.ended) return;
    this.ended = true;
    this.error = err;
    this.wake();
  }

  stop(): void {
    if (!this.ended) {
      this.ended = true;
      this.wake();
    }
    this.handle?.stop();
  }

  private wake(): void {
    const w = this.waiting;
    this.waiting = undefined;
    w?.();
  }

  private take(): WatchEvent<T> {
    const event = this.events[this.head++];
    if (this.head === this.events.length) {
      this.events = [];
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.events.length) {
      this.events = this.events.slice(this.head);
      this.head = 0;
    }
    return event;
  }

  async *[Symbol.asyncIterator](): AsyncIterator<WatchEvent<T>> {
    try {
      for (;;) {
        if (this.head < this.events.length) {
          yield this.take();
          continue;
        }
        if (this.ended) {
          if (this.error) throw this.error;
          return;
        }
        await new Promise<void>((resolve) => (this.waiting = resolve));
      }
    } finally {
      this.stop();
    }
  }
}

function kindOfObject(object: KubeObject): string {
  const kind = object.kind;
  if (!kind || !resolveKind(kind))
    throw new ApiError(
      'BadRequest',
      `the object has no known kind (kind: ${JSON.stringify(kind)}); set kind and apiVersion`,
    );
  return kind;
}

export class ApiClient implements Client {
  constructor(
    private readonly transport: Transport,
    private readonly retry: RetryPolicy = {},
  ) {}

  get<K extends KindName>(kind: K, name: string, options: GetOptions = {}): Promise<KindMap[K]> {
    const req: GetRequest = {
      kind,
      name,
      namespace: options.namespace ?? '',
      resourceVersion: options.resourceVersion ?? '',
    };
    return retrying(() => this.transport.get(req), 'read', this.retry) as Promise<KindMap[K]>;
  }

  list<K extends KindName>(kind: K, options: ListOptions = {}): Promise<ListResult<KindMap[K]>> {
    const req: ListRequest = {
      kind,
      namespace: options.namespace ?? '',
      labelSelector: options.labelSelector ?? '',
      fieldSelector: options.fieldSelector ?? '',
      limit: options.limit ?? 0,
      continue: options.continue ?? '',
      resourceVersion: options.resourceVersion ?? '',
      resourceVersionMatch: options.resourceVersionMatch ?? '',
    };
    return retrying(() => this.transport.list(req), 'read', this.retry) as Promise<ListResult<KindMap[K]>>;
  }

  async watch<K extends KindName>(kind: K, options: WatchOptions = {}): Promise<Watch<KindMap[K]>> {
    const req: WatchRequest = {
      kind,
      namespace: options.namespace ?? '',
      labelSelector: options.labelSelector ?? '',
      fieldSelector: options.fieldSelector ?? '',
      resourceVersion: options.resourceVersion ?? '',
      allowWatchBookmarks: options.allowWatchBookmarks ?? false,
      timeoutSeconds: options.timeoutSeconds ?? 0,
      ...(options.sendInitialEvents !== undefined ? { sendInitialEvents: options.sendInitialEvents } : {}),
    };
    const queue = new WatchQueue<KindMap[K]>();
    queue.attach(await retrying(() => this.transport.watch(req, queue), 'read', this.retry));
    return queue;
  }

  create<T extends KubeObject>(object: T, options: WriteOptions = {}): Promise<T> {
    const req: WriteRequest = {
      object,
      wireKind: kindOfObject(object),
      namespace: options.namespace,
      dryRun: options.dryRun,
      fieldManager: options.fieldManager,
    };
    return retrying(() => this.transport.create(req), resendModeOf.create(req), this.retry) as Promise<T>;
  }

  createManifest(manifest: string, options: WriteOptions = {}): Promise<KubeObject> {
    const req: WriteRequest = {
      manifest,
      namespace: options.namespace,
      dryRun: options.dryRun,
      fieldManager: options.fieldManager,
    };
    return retrying(() => this.transport.create(req), resendModeOf.create(req), this.retry);
  }

  update<T extends KubeObject>(object: T, options: WriteOptions = {}): Promise<T> {
    const req: WriteRequest = {
      object,
      wireKind: kindOfObject(object),
      namespace: options.namespace,
      dryRun: options.dryRun,
      fieldManager: options.fieldManager,
    };
    return retrying(() => this.transport.update(req), resendModeOf.update(req), this.retry) as Promise<T>;
  }

  updateStatus<T extends KubeObject>(object: T, options: WriteOptions = {}): Promise<T> {
    const req: WriteRequest = {
      object,
      wireKind: kindOfObject(object),
      namespace: options.namespace,
      dryRun: options.dryRun,
      fieldManager: options.fieldManager,
    };
    return retrying(
      () => this.transport.updateStatus(req),
      resendModeOf.update(req),
      this.retry,
    ) as Promise<T>;
  }

  patch<K extends KindName>(
    kind: K,
    name: string,
    patch: unknown,
    options: PatchOptions = {},
  ): Promise<KindMap[K]> {
    kindInfo(kind);
    const req: PatchRequest = {
      kind,
      name,
      namespace: options.namespace ?? '',
      patchType: options.type ?? 'merge',
      patch: typeof patch === 'string' ? patch : JSON.stringify(patch),
      subresource: options.subresource ?? '',
      dryRun: options.dryRun ?? false,
      ...(options.fieldManager ? { fieldManager: options.fieldManager } : {}),
      ...(options.force ? { force: true } : {}),
    };
    return retrying(() => this.transport.patch(req), resendModeOf.patch(), this.retry) as Promise<KindMap[K]>;
  }

  delete<K extends KindName>(
    kind: K,
    name: string,
    options: DeleteOptions = {},
  ): Promise<{ object: KindMap[K]; deleted: boolean }> {
    const req: DeleteRequest = {
      kind,
      name,
      namespace: options.namespace ?? '',
      propagationPolicy: options.propagationPolicy ?? '',
      dryRun: options.dryRun ?? false,
      ...(options.gracePeriodSeconds !== undefined ? { gracePeriodSeconds: options.gracePeriodSeconds } : {}),
      ...(options.preconditions ? { preconditions: options.preconditions } : {}),
    };
    return retrying(() => this.transport.delete(req), resendModeOf.delete(req), this.retry) as Promise<{
      object: KindMap[K];
      deleted: boolean;
    }>;
  }

  bind(namespace: string, podName: string, nodeName: string, options: BindOptions = {}): Promise<Pod> {
    const req: BindRequest = {
      binding: {
        apiVersion: 'v1',
        kind: 'Binding',
        metadata: { name: podName, namespace, ...(options.uid ? { uid: options.uid } : {}) },
        target: { apiVersion: 'v1', kind: 'Node', name: nodeName },
      },
      namespace,
      dryRun: options.dryRun ?? false,
    };
    return retrying(() => this.transport.bind(req), resendModeOf.bind(), this.retry) as Promise<Pod>;
  }

  async logs(namespace: string, pod: string, options: LogsOptions = {}): Promise<LogStream> {
    const req: LogsRequest = {
      namespace,
      name: pod,
      container: options.container ?? '',
      follow: options.follow ?? false,
      previous: options.previous ?? false,
      timestamps: options.timestamps ?? false,
      sinceTime: options.sinceTime ?? '',
      ...(options.tailLines !== undefined ? { tailLines: options.tailLines } : {}),
      ...(options.sinceSeconds !== undefined ? { sinceSeconds: options.sinceSeconds } : {}),
      ...(options.limitBytes !== undefined ? { limitBytes: options.limitBytes } : {}),
    };
    const queue = new LogQueue();
    // Opening is a read: retried while the server is unreachable. Nothing has reached the
    // queue before the stream is open, so a retry cannot repeat bytes.
    queue.attach(await retrying(() => this.transport.logs(req, queue), 'read', this.retry));
    return queue;
  }

  reconnect(): void {
    this.transport.reconnect?.();
  }

  close(): void {
    this.transport.close();
  }
}

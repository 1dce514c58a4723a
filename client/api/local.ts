/**
 * The apiserver's request surface, shared by the in-process client (controllers inside the
 * control plane) and the gRPC service: both go through the same authentication result,
 * authorization, admission, validation and watch cache.
 */
import type {
  BindRequest,
  DeleteRequest,
  GetRequest,
  KubeObject,
  ListRequest,
  ListResult,
  LogsRequest,
  PatchRequest,
  WatchEventType,
  WatchRequest,
} from './types.js';
import type { ApiError } from './errors.js';

export type Role = 'admin' | 'viewer' | 'node' | 'join';

/** Who is calling, as established by authentication. */
export interface Identity {
  /** e.g. "admin", "system:node:pi-1", "system:controller:daemonset". */
  name: string;
  role: Role;
  /** For role "node": the node this credential belongs to. */
  nodeName?: string;
  /**
   * The id of the bearer token this identity was proven with (absent for the control plane's
   * own identities): what is opened with it registers for the token's revocation.
   */
  tokenId?: string;
}

export interface WriteRequest {
  /** A typed object (its kind from `kind` or from the wire's oneof); or a manifest. */
  object?: KubeObject;
  /** Set by the wire layer from the ApiObject oneof when the object omits `kind`. */
  wireKind?: string;
  /** A Kubernetes JSON or YAML document. */
  manifest?: string;
  namespace?: string;
  dryRun?: boolean;
  /**
   * The kind and name the request names apart from its object, as a Kubernetes URL does: the
   * apiserver authorizes from them before it reads a manifest, and the object must match.
   */
  kind?: string;
  name?: string;
  /**
   * Fields the schema does not know (Kubernetes' fieldValidation): Strict (the default) refuses
   * the object naming them; Warn drops them and appends a warning per field to `warnings`;
   * Ignore drops them silently.
   */
  fieldValidation?: 'Strict' | 'Warn' | 'Ignore';
  /** Where Warn's warnings go (the REST door sends them as Warning headers). */
  warnings?: string[];
  /** Who makes the change, recorded in metadata.managedFields; default: named after the caller. */
  fieldManager?: string;
}

export interface LocalWatchSink {
  /** Returns false when the consumer cannot keep up (the watch is then ended). */
  event(type: Exclude<WatchEventType, 'BOOKMARK'>, object: KubeObject): boolean;
  bookmark(resourceVersion: string, initialEventsEnd: boolean): void;
  /** The watch ended: normally (timeout, stop) without an error, or with one. */
  end(err?: ApiError): void;
}

export interface LocalWatch {
  stop(): void;
}

/**
 * Where a log stream's bytes go. The producer counts what was handed over but not yet
 * `taken` against a limit and stops a stream whose reader falls too far behind, so a slow
 * reader never makes anyone buffer without bound.
 */
export interface LocalLogSink {
  /** The next bytes; call `taken` once the reader has them (or dropped them). */
  data(chunk: Buffer, taken: () => void): void;
  /** The log ended: normally (its end, limitBytes, stop) without an error, or with one. */
  end(err?: ApiError): void;
}

export interface LocalLogStream {
  /** Stops the stream (the agent is told to stop reading the log); `end` is not called. */
  stop(): void;
}

export interface LocalApi {
  get(id: Identity, req: GetRequest): Promise<KubeObject>;
  list(id: Identity, req: ListRequest): Promise<ListResult>;
  watch(id: Identity, req: WatchRequest, sink: LocalWatchSink): Promise<LocalWatch>;
  create(id: Identity, req: WriteRequest): Promise<KubeObject>;
  update(id: Identity, req: WriteRequest): Promise<KubeObject>;
  updateStatus(id: Identity, req: WriteRequest): Promise<KubeObject>;
  patch(id: Identity, req: PatchRequest): Promise<KubeObject>;
  delete(id: Identity, req: DeleteRequest): Promise<{ object: KubeObject; deleted: boolean }>;
  bind(id: Identity, req: BindRequest): Promise<KubeObject>;
  /**
   * Kubernetes' pods/log: resolves once the stream is open (authorized, the pod found, its
   * agent connected); the bytes then go to `sink`.
   */
  logs(id: Identity, req: LogsRequest, sink: LocalLogSink): Promise<LocalLogStream>;
}

/**
 * The gRPC transport: TLS pinned to the cluster's CA (or plaintext to a loopback server),
 * the bearer token on every call, keepalive pings so a dead connection is noticed, and
 * gRPC statuses turned back into typed ApiErrors.
 */
import * as grpc from '@grpc/grpc-js';
import {
  ApiObject,
  ListResponse,
  ResourcesService,
  WatchEvent as WireWatchEvent,
} from '../../proto/gen/kubelab/v1/api.js';
import { ApiError } from '../api/errors.js';
import { fromApiObject, resolveKind, toApiObject } from '../api/kinds.js';
import type { LocalLogSink, LocalLogStream, LocalWatch, LocalWatchSink, WriteRequest } from '../api/local.js';
import type { DeleteResponse, KubeObject, ListResult } from '../api/types.js';
import { ApiClient, type Client, type Transport } from '../client.js';
import type { RetryPolicy } from '../retry.js';
import { Connection, toApiErrorFromGrpc, type ConnectionOptions } from './connection.js';
import { FailoverTransport } from './failover.js';
import { withFastRequests } from './protowire.js';
import { openLogStream } from './logs.js';

export interface GrpcClientOptions extends ConnectionOptions {
  retry?: RetryPolicy;
  /**
   * The manager this client's writes are recorded for in managedFields, unless a write names
   * its own (default: the server names it after the credential).
   */
  fieldManager?: string;
}

function objectIn(o: ApiObject | undefined): KubeObject {
  const u = fromApiObject(o);
  if (!u) throw new ApiError('InternalError', 'the server sent an empty object');
  return u.object;
}

/** A write as sent: the object (or manifest) with its kind, namespace and name beside it. */
function wireWrite(
  req: WriteRequest,
  fieldManager: string | undefined,
): {
  object?: ApiObject;
  manifest: string;
  namespace: string;
  dryRun: boolean;
  kind: string;
  name: string;
  fieldManager: string;
} {
  let object: ApiObject | undefined;
  let kind = req.kind ?? '';
  if (req.object) {
    const info = resolveKind(req.wireKind ?? req.object.kind ?? '');
    if (!info)
      throw new ApiError(
        'BadRequest',
        `the object has no known kind (${req.object.kind}); set kind and apiVersion`,
      );
    object = toApiObject(info, req.object);
    kind ||= info.kind;
  }
  return {
    ...(object ? { object } : {}),
    manifest: req.manifest ?? '',
    namespace: req.namespace || req.object?.metadata?.namespace || '',
    dryRun: req.dryRun ?? false,
    kind,
    name: req.name || req.object?.metadata?.name || '',
    fieldManager: req.fieldManager || fieldManager || '',
  };
}

export class GrpcTransport implements Transport {
  private readonly connection: Connection;

  constructor(private readonly options: GrpcClientOptions) {
    this.connection = new Connection(
      options,
      withFastRequests(ResourcesService) as unknown as grpc.ServiceDefinition,
      'kubelab.v1.Resources',
    );
  }

  reconnect(): void {
    this.connection.reconnect();
  }

  private unary<Req, Res>(method: string, req: Req): Promise<Res> {
    return this.connection.unary(method, req);
  }

  async get(req: Parameters<Transport['get']>[0]): Promise<KubeObject> {
    return objectIn(await this.unary<typeof req, ApiObject>('get', req));
  }

  async list(req: Parameters<Transport['list']>[0]): Promise<ListResult> {
    const res = await this.unary<typeof req, ListResponse>('list', req);
    return {
      items: (res.items ?? []).map(objectIn),
      resourceVersion: res.resourceVersion ?? '',
      ...(res.continue ? { continue: res.continue } : {}),
      ...(res.remainingItemCount !== undefined ? { remainingItemCount: res.remainingItemCount } : {}),
    };
  }

  watch(req: Parameters<Transport['watch']>[0], sink: LocalWatchSink): Promise<LocalWatch> {
    const call = (
      this.connection.client as unknown as {
        watch(r: unknown, md: grpc.Metadata): grpc.ClientReadableStream<WireWatchEvent>;
      }
    )
      // This reader takes events in batches (WatchEvent.following).
      .watch({ ...req, allowBatches: true }, this.connection.metadata());
    let cancelled = false;
    let ended = false;
    const finish = (err?: ApiError) => {
      if (ended) return;
      ended = true;
      sink.end(err);
    };
    return new Promise((resolve, reject) => {
      let started = false;
      // A watch that is not established in time (no headers) is as good as dead.
      const establish = setTimeout(() => {
        if (started) return;
        cancelled = true;
        call.cancel();
        ended = true;
        reject(
          new ApiError(
            'Unavailable',
            `the watch was not established within ${this.connection.timeoutMs / 1000} s; the connection may be dead`,
          ),
        );
      }, this.connection.timeoutMs);
      establish.unref?.();
      const start = () => {
        if (!started) {
          started = true;
          clearTimeout(establish);
          resolve({
            stop: () => {
              cancelled = true;
              call.cancel();
              finish();
            },
          });
        }
      };
      call.on('metadata', start);
      /** Hands one event to the sink; false when the sink refused it and the watch is over. */
      const deliver = (ev: WireWatchEvent): boolean => {
        const object = objectIn(ev.object);
        if (ev.type === 'BOOKMARK') {
          sink.bookmark(
            object.metadata?.resourceVersion ?? '',
            object.metadata?.annotations?.['k8s.io/initial-events-end'] === 'true',
          );
          return true;
        }
        if (sink.event(ev.type as 'ADDED' | 'MODIFIED' | 'DELETED', object)) return true;
        cancelled = true;
        call.cancel();
        finish(
          new ApiError(
            'Unavailable',
            'the watch was stopped because events were not consumed fast enough; watch again from the last resourceVersion',
          ),
        );
        return false;
      };
      call.on('data', (ev: WireWatchEvent) => {
        start();
        if (ended || !deliver(ev)) return;
        for (const next of ev.following ?? []) if (ended || !deliver(next)) return;
      });
      call.on('error', (err: grpc.ServiceError) => {
        if (cancelled) return finish();
        const e = toApiErrorFromGrpc(err, this.options.server);
        if (!started) {
          ended = true;
          clearTimeout(establish);
          return reject(e);
        }
        finish(e);
      });
      call.on('end', () => {
        start();
        finish();
      });
    });
  }

  async create(req: WriteRequest): Promise<KubeObject> {
    return objectIn(await this.unary('create', wireWrite(req, this.options.fieldManager)));
  }

  async update(req: WriteRequest): Promise<KubeObject> {
    return objectIn(await this.unary('update', wireWrite(req, this.options.fieldManager)));
  }

  async updateStatus(req: WriteRequest): Promise<KubeObject> {
    return objectIn(await this.unary('updateStatus', wireWrite(req, this.options.fieldManager)));
  }

  async patch(req: Parameters<Transport['patch']>[0]): Promise<KubeObject> {
    return objectIn(
      await this.unary('patch', { ...req, fieldManager: req.fieldManager || this.options.fieldManager }),
    );
  }

  async bind(req: Parameters<Transport['bind']>[0]): Promise<KubeObject> {
    return objectIn(await this.unary('bind', req));
  }

  logs(req: Parameters<Transport['logs']>[0], sink: LocalLogSink): Promise<LocalLogStream> {
    return openLogStream(this.connection, req, sink);
  }

  async delete(req: Parameters<Transport['delete']>[0]): Promise<{ object: KubeObject; deleted: boolean }> {
    const res = await this.unary<typeof req, DeleteResponse>('delete', req);
    return { object: objectIn(res.object), deleted: res.deleted ?? false };
  }

  close(): void {
    this.connection.close();
  }
}

export function grpcClient(options: GrpcClientOptions): Client {
  return new ApiClient(new GrpcTransport(options), options.retry);
}

/** A client over several control-plane replicas, moving to the next when one is unreachable. */
export function failoverClient(servers: string[], options: Omit<GrpcClientOptions, 'server'>): Client {
  if (servers.length === 1) return grpcClient({ ...options, server: servers[0] });
  return new ApiClient(
    new FailoverTransport(servers.map((server) => new GrpcTransport({ ...options, server }))),
    options.retry,
  );
}

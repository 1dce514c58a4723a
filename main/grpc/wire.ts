/**
 * The wire form of the Resources service, built on the ts-proto definition with three
 * changes: a request that does not decode becomes a marker the handler answers with
 * INVALID_ARGUMENT (not a crash, not INTERNAL); List responses and watch events reuse each
 * cached object's encoding, so 10,000 objects are encoded once, not once per client; and
 * errors carry their reason and field causes in `kubelab-status-bin` trailing metadata.
 */
import * as grpc from '@grpc/grpc-js';
import { BinaryWriter } from '@bufbuild/protobuf/wire';
import { ApiObject, ResourcesService, WatchEvent as WireWatchEvent } from '../../proto/gen/kubelab/v1/api.js';
import type { ApiError } from '../../client/api/errors.js';
import { STATUS_METADATA_KEY } from '../../client/grpc/connection.js';
import { resolveKind, toApiObject } from '../../client/api/kinds.js';
import type { KubeObject } from '../../client/api/types.js';
import type { CachedObject } from '../apiserver/watchcache.js';

/** A request whose bytes did not decode. */
export interface Malformed {
  readonly malformed: string;
}

export function isMalformed(req: unknown): req is Malformed {
  return typeof req === 'object' && req !== null && 'malformed' in req;
}

/** Encodes an object for the wire once; the cache entry keeps the bytes. */
export function encodedObject(entry: CachedObject): Uint8Array {
  if (!entry.encoded) entry.encoded = encodeObject(entry.object);
  return entry.encoded;
}

export function encodeObject(obj: KubeObject): Uint8Array {
  const info = resolveKind(obj.kind ?? '');
  if (!info) throw new Error(`cannot encode an object of kind ${obj.kind}`);
  return ApiObject.encode(toApiObject(info, obj)).finish();
}

export interface EncodedList {
  items: CachedObject[];
  resourceVersion: string;
  continue?: string;
  remainingItemCount?: number;
}

/** ListResponse { resourceVersion = 1; continue = 2; repeated items = 3; remainingItemCount = 4 }. */
export function encodeList(list: EncodedList): Buffer {
  const w = new BinaryWriter();
  if (list.resourceVersion) w.uint32(10).string(list.resourceVersion);
  if (list.continue) w.uint32(18).string(list.continue);
  for (const item of list.items) w.uint32(26).bytes(encodedObject(item));
  if (list.remainingItemCount !== undefined) w.uint32(32).int32(list.remainingItemCount);
  return Buffer.from(w.finish());
}

export type OutgoingWatchEvent =
  | { type: 'ADDED' | 'MODIFIED' | 'DELETED'; entry: CachedObject }
  | {
      type: 'BOOKMARK';
      kind: string;
      apiVersion: string;
      resourceVersion: string;
      initialEventsEnd: boolean;
    };

/** WatchEvent { type = 1; object = 2 }. */
export function encodeWatchEvent(ev: OutgoingWatchEvent): Buffer {
  if (ev.type === 'BOOKMARK') {
    const info = resolveKind(ev.kind)!;
    const object = {
      apiVersion: ev.apiVersion,
      kind: ev.kind,
      metadata: {
        resourceVersion: ev.resourceVersion,
        ...(ev.initialEventsEnd ? { annotations: { 'k8s.io/initial-events-end': 'true' } } : {}),
      },
    } as KubeObject;
    return Buffer.from(
      WireWatchEvent.encode({ type: 'BOOKMARK', object: toApiObject(info, object) }).finish(),
    );
  }
  const w = new BinaryWriter();
  w.uint32(10).string(ev.type);
  w.uint32(18).bytes(encodedObject(ev.entry));
  return Buffer.from(w.finish());
}

function safeDecode<T>(decode: (b: Uint8Array) => T): (b: Buffer) => T | Malformed {
  return (bytes) => {
    try {
      return decode(bytes);
    } catch (err) {
      return { malformed: (err as Error).message };
    }
  };
}

type MethodDef = { requestDeserialize: (b: Buffer) => unknown; responseSerialize: (v: never) => Buffer };

/** A service definition whose requests that fail to decode become `Malformed` markers. */
export function safeService(definition: Record<string, unknown>): grpc.ServiceDefinition {
  const out: Record<string, unknown> = {};
  for (const [name, def] of Object.entries(definition)) {
    const d = def as MethodDef;
    out[name] = {
      ...d,
      requestDeserialize: safeDecode(d.requestDeserialize as unknown as (b: Uint8Array) => unknown),
    };
  }
  return out as unknown as grpc.ServiceDefinition;
}

/** The Resources service as the server registers it: List and Watch send pre-encoded bytes. */
export function serverDefinition(): grpc.ServiceDefinition {
  const out = safeService(ResourcesService) as unknown as Record<string, MethodDef>;
  out.list = { ...out.list, responseSerialize: (v: Buffer) => v } as unknown as MethodDef;
  out.watch = { ...out.watch, responseSerialize: (v: Buffer) => v } as unknown as MethodDef;
  return out as unknown as grpc.ServiceDefinition;
}

export function statusMetadata(err: ApiError): grpc.Metadata {
  const md = new grpc.Metadata();
  md.set(STATUS_METADATA_KEY, Buffer.from(JSON.stringify(err.toStatus())));
  return md;
}

export function toServiceError(err: ApiError): Partial<grpc.ServiceError> {
  return { code: err.code, details: err.message, metadata: statusMetadata(err) };
}

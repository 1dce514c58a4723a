/**
 * The wire form of the Resources service, built on the ts-proto definition with three
 * changes: a request that does not decode becomes a marker the handler answers with
 * INVALID_ARGUMENT (not a crash, not INTERNAL); List responses and watch events reuse each
 * cached object's encoding, so 10,000 objects are encoded once, not once per client; and
 * errors carry their reason and field causes in `kubelab-status-bin` trailing metadata.
 */
import * as grpc from '@grpc/grpc-js';
import { ApiObject, ResourcesService, WatchEvent as WireWatchEvent } from '../../proto/gen/kubelab/v1/api.js';
import type { ApiError } from '../../client/api/errors.js';
import { STATUS_METADATA_KEY } from '../../client/grpc/connection.js';
import {
  encodeCallResult,
  fieldLength,
  writeField,
  writeVarint,
  varintLength,
} from '../../client/grpc/protowire.js';
import { encodeSharedBuffer } from '../../client/grpc/sharedwriter.js';
import { decodeWithWireReader } from '../../client/grpc/wirereader.js';
import { resolveKind, toApiObject } from '../../client/api/kinds.js';
import type { KubeObject } from '../../client/api/types.js';
import type { CachedObject } from '../apiserver/watchcache.js';
import { decodeWriteEnvelope } from './writeenvelope.js';

/** A request whose bytes did not decode. */
export interface Malformed {
  readonly malformed: string;
}

export function isMalformed(req: unknown): req is Malformed {
  return typeof req === 'object' && req !== null && 'malformed' in req;
}

/**
 * The encodings of one cached version of an object, kept on its cache entry so that 10,000
 * objects are encoded once, not once per client, and dropped with the entry. The object's
 * bytes live once: inside the first watch event built for it when there is one.
 */
interface Encodings {
  object?: Buffer;
  ADDED?: Buffer;
  MODIFIED?: Buffer;
  DELETED?: Buffer;
}

function encodingsOf(entry: CachedObject): Encodings {
  return (entry.memo ??= {}) as Encodings;
}

/** An entry's ApiObject encoding, made once (list answers, watch events). */
export function encodedEntry(entry: CachedObject): Buffer {
  const memo = encodingsOf(entry);
  return (memo.object ??= encodedObject(entry.object));
}

/**
 * An object's ApiObject encoding, not kept: a unary answer goes out once, and keeping the
 * encoding of every object written (each lease renewal, each event) doubles what the caches
 * hold for objects nobody watches over gRPC.
 */
export function encodedObject(obj: KubeObject): Buffer {
  const info = resolveKind(obj.kind ?? '');
  if (!info) throw new Error(`cannot encode an object of kind ${obj.kind}`);
  const message = toApiObject(info, obj);
  return encodeSharedBuffer((w) => ApiObject.encode(message, w));
}

export interface EncodedList {
  items: CachedObject[];
  resourceVersion: string;
  continue?: string;
  remainingItemCount?: number;
}

/**
 * ListResponse { resourceVersion = 1; continue = 2; repeated items = 3; remainingItemCount = 4 },
 * written into one buffer of exactly the right size from the items' cached encodings.
 */
export function encodeList(list: EncodedList): Buffer {
  const rv = Buffer.from(list.resourceVersion ?? '');
  const cont = Buffer.from(list.continue ?? '');
  const items = list.items.map(encodedEntry);
  let size = (rv.length ? fieldLength(rv.length) : 0) + (cont.length ? fieldLength(cont.length) : 0);
  for (const b of items) size += fieldLength(b.length);
  const remaining = list.remainingItemCount;
  if (remaining !== undefined) size += 1 + varintLength(remaining);
  const buf = Buffer.allocUnsafe(size);
  let pos = 0;
  if (rv.length) pos = writeField(buf, pos, 10, rv);
  if (cont.length) pos = writeField(buf, pos, 18, cont);
  for (const b of items) pos = writeField(buf, pos, 26, b);
  if (remaining !== undefined) {
    buf[pos++] = 32;
    pos = writeVarint(buf, pos, remaining);
  }
  return buf;
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

/** The last BOOKMARK encoded per kind: every watcher of a kind bookmarked at once gets the same bytes. */
const lastBookmark = new Map<string, { rv: string; initialEventsEnd: boolean; bytes: Buffer }>();

/** WatchEvent { type = 1; object = 2 }; an object's event bytes are built once for all watchers. */
export function encodeWatchEvent(ev: OutgoingWatchEvent): Buffer {
  if (ev.type === 'BOOKMARK') {
    const last = lastBookmark.get(ev.kind);
    if (last && last.rv === ev.resourceVersion && last.initialEventsEnd === ev.initialEventsEnd)
      return last.bytes;
    const bytes = encodeBookmark(ev);
    lastBookmark.set(ev.kind, { rv: ev.resourceVersion, initialEventsEnd: ev.initialEventsEnd, bytes });
    return bytes;
  }
  const memo = encodingsOf(ev.entry);
  const cached = memo[ev.type];
  if (cached) return cached;
  const type = Buffer.from(ev.type);
  const object = memo.object ?? encodedObject(ev.entry.object);
  const buf = Buffer.allocUnsafe(fieldLength(type.length) + fieldLength(object.length));
  const at = writeField(buf, 0, 10, type);
  writeField(buf, at, 18, object);
  memo[ev.type] = buf;
  // From now on the object's bytes are the tail of this event's.
  memo.object ??= buf.subarray(buf.length - object.length);
  return buf;
}

/**
 * Several encoded WatchEvents as one: the first, with the others as its `following` (field 3).
 * Protobuf merges fields of concatenated bytes, so appending the fields is the whole encoding.
 */
export function encodeWatchBatch(events: readonly Buffer[]): Buffer {
  if (events.length === 1) return events[0];
  let size = events[0].length;
  for (let i = 1; i < events.length; i++) size += fieldLength(events[i].length);
  const buf = Buffer.allocUnsafe(size);
  let pos = events[0].copy(buf, 0);
  for (let i = 1; i < events.length; i++) pos = writeField(buf, pos, 26, events[i]);
  return buf;
}

function encodeBookmark(ev: Extract<OutgoingWatchEvent, { type: 'BOOKMARK' }>): Buffer {
  const info = resolveKind(ev.kind)!;
  const object = {
    apiVersion: ev.apiVersion,
    kind: ev.kind,
    metadata: {
      resourceVersion: ev.resourceVersion,
      ...(ev.initialEventsEnd ? { annotations: { 'k8s.io/initial-events-end': 'true' } } : {}),
    },
  } as KubeObject;
  const message = { type: 'BOOKMARK', object: toApiObject(info, object) };
  return encodeSharedBuffer((w) => WireWatchEvent.encode(message, w));
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
  return withSafeRequests(decodeWithWireReader(definition, 'request'));
}

/** Any service definition (ts-proto's or proto-loader's) with its request decoding made safe. */
export function withSafeRequests(definition: object): grpc.ServiceDefinition {
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

/**
 * The Resources service as the server registers it: every answer goes out pre-encoded, and
 * writes are read as envelopes whose objects stay bytes until the caller is authorized.
 */
export function serverDefinition(): grpc.ServiceDefinition {
  const out = safeService(ResourcesService) as unknown as Record<string, MethodDef>;
  for (const method of ['get', 'list', 'watch', 'create', 'update', 'updateStatus', 'patch', 'bind']) {
    out[method] = { ...out[method], responseSerialize: (v: Buffer) => v } as unknown as MethodDef;
  }
  out.calls = { ...out.calls, responseSerialize: encodeCallResult } as unknown as MethodDef;
  for (const method of ['create', 'update', 'updateStatus']) {
    out[method] = {
      ...out[method],
      requestDeserialize: safeDecode(decodeWriteEnvelope),
    } as unknown as MethodDef;
  }
  return out as unknown as grpc.ServiceDefinition;
}

/**
 * The status travels in HTTP/2 trailers, which peers cap (often at 8–16 KiB in all): a status
 * that does not fit never reaches the client, whose call then hangs to its deadline. The
 * message is already bounded (ApiError); causes are dropped from the end until it fits.
 */
const MAX_STATUS_BYTES = 6 * 1024;

/** At most `maxBytes` of `s`'s UTF-8, cut on a character boundary. */
function truncateUtf8(s: string, maxBytes: number): string {
  if (Buffer.byteLength(s) <= maxBytes) return s;
  return `${Buffer.from(s)
    .subarray(0, maxBytes)
    .toString('utf8')
    .replace(/\uFFFD+$/, '')}…`;
}

export function statusMetadata(err: ApiError): grpc.Metadata {
  const status = err.toStatus();
  let causes = status.details.causes ?? [];
  const encode = (message: string) =>
    JSON.stringify({
      ...status,
      message,
      details: { ...status.details, ...(causes.length ? { causes } : {}) },
    });
  let json = encode(status.message);
  while (Buffer.byteLength(json) > MAX_STATUS_BYTES && causes.length) {
    causes = causes.slice(0, Math.floor(causes.length / 2));
    json = encode(status.message);
  }
  if (Buffer.byteLength(json) > MAX_STATUS_BYTES)
    json = encode(truncateUtf8(status.message, MAX_STATUS_BYTES / 4));
  const md = new grpc.Metadata();
  md.set(STATUS_METADATA_KEY, Buffer.from(json));
  return md;
}

/** grpc-message is percent-encoded: non-ASCII text takes three times its bytes (6 KiB here at most). */
const MAX_DETAILS_BYTES = 2 * 1024;

export function toServiceError(err: ApiError): Partial<grpc.ServiceError> {
  return {
    code: err.code,
    details: truncateUtf8(err.message, MAX_DETAILS_BYTES),
    metadata: statusMetadata(err),
  };
}

/**
 * Create and Update requests are read in two steps: first the envelope — the kind, namespace
 * and name the request names, and its manifest or the typed object's bytes — then, once the
 * caller is authorized for what the envelope names, the object itself. A credential that may
 * not write never costs the server a decode of its object or a parse of its manifest.
 */
import { BinaryReader, WireType } from '@bufbuild/protobuf/wire';
import { ApiError, echo } from '../../client/api/errors.js';
import { fromApiObject, KINDS, type KindInfo } from '../../client/api/kinds.js';
import type { Identity, WriteRequest } from '../../client/api/local.js';
import { WireReader } from '../../client/grpc/wirereader.js';
import schemaJson from '../../proto/gen/schema.json' with { type: 'json' };
import { ApiObject } from '../../proto/gen/kubelab/v1/api.js';
import type { ApiServer } from '../apiserver/apiserver.js';

const messages = (schemaJson as { messages: Record<string, Record<string, { id: number }>> }).messages;

/**
 * A CreateRequest or UpdateRequest as first read: the object and the manifest stay bytes (views
 * of the request's own buffer, not copies) until the request is authorized.
 */
export interface WriteEnvelope {
  object?: Uint8Array;
  manifest?: Uint8Array;
  namespace: string;
  dryRun: boolean;
  kind: string;
  name: string;
  fieldManager: string;
}

/** The field numbers of CreateRequest; UpdateRequest must use the same (checked at load). */
const FIELD = Object.fromEntries(
  ['object', 'manifest', 'namespace', 'dryRun', 'kind', 'name', 'fieldManager'].map((f) => [
    f,
    messages['kubelab.v1.CreateRequest'][f].id,
  ]),
) as Record<keyof WriteEnvelope, number>;
for (const [f, id] of Object.entries(FIELD)) {
  if (messages['kubelab.v1.UpdateRequest'][f]?.id !== id)
    throw new Error(
      `UpdateRequest.${f} must have CreateRequest's field number ${id}: the server reads both alike`,
    );
}

const utf8 = new TextDecoder();

/** Reads the envelope of a Create or Update request; throws on bytes that are no such message. */
export function decodeWriteEnvelope(bytes: Uint8Array): WriteEnvelope {
  const reader = new BinaryReader(bytes);
  const out: WriteEnvelope = { namespace: '', dryRun: false, kind: '', name: '', fieldManager: '' };
  while (reader.pos < reader.len) {
    const [field, wireType] = reader.tag();
    const lengthDelimited = wireType === WireType.LengthDelimited;
    if (field === FIELD.object && lengthDelimited) out.object = reader.bytes();
    else if (field === FIELD.manifest && lengthDelimited) out.manifest = reader.bytes();
    else if (field === FIELD.namespace && lengthDelimited) out.namespace = utf8.decode(reader.bytes());
    else if (field === FIELD.kind && lengthDelimited) out.kind = utf8.decode(reader.bytes());
    else if (field === FIELD.name && lengthDelimited) out.name = utf8.decode(reader.bytes());
    else if (field === FIELD.fieldManager && lengthDelimited) out.fieldManager = utf8.decode(reader.bytes());
    else if (field === FIELD.dryRun && wireType === WireType.Varint) out.dryRun = reader.bool();
    else reader.skip(wireType, field);
  }
  return out;
}

const apiObjectFields = messages['kubelab.v1.ApiObject'];
const kindByFieldNumber = new Map<number, KindInfo>(
  KINDS.filter((k) => apiObjectFields[k.field]).map((k) => [apiObjectFields[k.field].id, k]),
);

/**
 * The kind a typed object's bytes carry, read from its field tags alone. ApiObject is a oneof:
 * an object that sets two of its members is refused (decoders disagree on which one wins).
 */
export function kindOfObjectBytes(bytes: Uint8Array): KindInfo | undefined {
  const reader = new BinaryReader(bytes);
  let found: KindInfo | undefined;
  while (reader.pos < reader.len) {
    const [field, wireType] = reader.tag();
    if (wireType === WireType.EndGroup) break;
    const kind = kindByFieldNumber.get(field);
    if (kind && found && kind !== found)
      throw new ApiError(
        'BadRequest',
        `the object sets several of ApiObject's fields (${found.field}, ${kind.field}); set exactly one`,
      );
    found = kind ?? found;
    reader.skip(wireType, field);
  }
  return found;
}

function decodeObject(bytes: Uint8Array): Pick<WriteRequest, 'object' | 'wireKind'> {
  const message = ApiObject.decode(new WireReader(bytes));
  const unwrapped = fromApiObject(message);
  if (!unwrapped) {
    const unknown = Object.keys(message._unknownFields ?? {});
    throw new ApiError(
      'BadRequest',
      unknown.length
        ? `the object is of a kind this server does not know (ApiObject field ${echo(unknown.join(', '))}); upgrade the server`
        : 'the object is empty: set exactly one field of ApiObject (e.g. pod) or send a manifest',
    );
  }
  return { object: unwrapped.object, wireKind: unwrapped.info.kind };
}

/**
 * The write a request asks for, its object decoded only after the caller is authorized for the
 * kind, namespace and name the envelope names (the apiserver checks again once it has the object).
 */
export function writeRequestOf(
  api: ApiServer,
  id: Identity,
  verb: 'create' | 'update',
  envelope: WriteEnvelope,
  subresource?: 'status',
): WriteRequest {
  const objectBytes = envelope.object?.length ? envelope.object : undefined;
  let wireKind: string | undefined;
  if (objectBytes) {
    try {
      wireKind = kindOfObjectBytes(objectBytes)?.kind;
    } catch (err) {
      if (err instanceof ApiError) throw err;
      throw new ApiError('BadRequest', 'the object is not a valid protobuf ApiObject; check the client');
    }
  }
  const manifestBytes = envelope.manifest?.length ? envelope.manifest : undefined;
  if (objectBytes && manifestBytes)
    throw new ApiError('BadRequest', 'send either object or manifest, not both');
  const request: WriteRequest = {
    kind: envelope.kind || undefined,
    wireKind,
    name: envelope.name || undefined,
    namespace: envelope.namespace || undefined,
    dryRun: envelope.dryRun ?? false,
    fieldManager: envelope.fieldManager || undefined,
  };
  api.authorizeEnvelope(id, verb, request, subresource);
  // Object.assign, not spreads that add keys: in Node 20's V8 those make a hidden class per
  // request, which lives until the next mark-compact clears it.
  if (manifestBytes) return Object.assign(request, { manifest: utf8.decode(manifestBytes) });
  if (!objectBytes) return request;
  let decoded: Pick<WriteRequest, 'object' | 'wireKind'>;
  try {
    decoded = decodeObject(objectBytes);
  } catch (err) {
    if (err instanceof ApiError) throw err;
    throw new ApiError(
      'BadRequest',
      `the object is not a valid protobuf ApiObject (${echo(String((err as Error).message))}); check the client's generated code matches kubelab.v1`,
    );
  }
  return Object.assign(request, decoded);
}

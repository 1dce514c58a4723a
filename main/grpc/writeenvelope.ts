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
import { ApiObject, type WriteRequestEnvelope } from '../../proto/gen/kubelab/v1/api.js';
import type { ApiServer } from '../apiserver/apiserver.js';

const apiObjectFields = (schemaJson as { messages: Record<string, Record<string, { id: number }>> }).messages[
  'kubelab.v1.ApiObject'
];
const kindByFieldNumber = new Map<number, KindInfo>(
  KINDS.filter((k) => apiObjectFields[k.field]).map((k) => [apiObjectFields[k.field].id, k]),
);

/**
 * The kind a typed object's bytes carry, read from its field tags alone. ApiObject is a
 * oneof, and protobuf keeps the last of several members sent: so does this.
 */
export function kindOfObjectBytes(bytes: Uint8Array): KindInfo | undefined {
  const reader = new BinaryReader(bytes);
  let found: KindInfo | undefined;
  while (reader.pos < reader.len) {
    const [field, wireType] = reader.tag();
    if (wireType === WireType.EndGroup) break;
    found = kindByFieldNumber.get(field) ?? found;
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
  envelope: WriteRequestEnvelope,
  subresource?: 'status',
): WriteRequest {
  const objectBytes = envelope.object?.length ? envelope.object : undefined;
  let wireKind: string | undefined;
  if (objectBytes) {
    try {
      wireKind = kindOfObjectBytes(objectBytes)?.kind;
    } catch {
      throw new ApiError('BadRequest', 'the object is not a valid protobuf ApiObject; check the client');
    }
  }
  const request: WriteRequest = {
    kind: envelope.kind || undefined,
    wireKind,
    name: envelope.name || undefined,
    manifest: envelope.manifest || undefined,
    namespace: envelope.namespace || undefined,
    dryRun: envelope.dryRun ?? false,
  };
  if (objectBytes && request.manifest)
    throw new ApiError('BadRequest', 'send either object or manifest, not both');
  api.authorizeEnvelope(id, verb, request, subresource);
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
  return { ...request, ...decoded };
}

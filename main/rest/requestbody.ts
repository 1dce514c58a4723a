/**
 * What a write's body holds, by its content type: JSON (parsed here, its syntax errors named as
 * such), YAML (handed to the apiserver's manifest reader, which gates and limits it), or
 * Kubernetes protobuf for the few messages kubectl sends that way (protobuf.ts). Read only
 * after the request is authorized on its URL.
 */
import { ApiError, echo } from '../../client/api/errors.js';
import type { KindName, KubeObject } from '../../client/api/types.js';
import { parseJson } from '../../client/parse/json.js';
import { DEFAULT_PARSE_LIMITS } from '../../client/parse/limits.js';
import { parseApiError } from '../apiserver/manifests.js';
import { readBody, readBytes } from './body.js';
import type { RestRequestMessage } from './handler.js';
import { decodeKubeProtobuf, isProtobuf } from './protobuf.js';

const YAML_TYPES = new Set(['application/yaml', 'application/x-yaml', 'text/yaml']);

type BodyType = 'json' | 'yaml' | 'protobuf';

function bodyTypeOf(req: RestRequestMessage): BodyType {
  const type = String(req.headers['content-type'] ?? '')
    .split(';')[0]
    .trim()
    .toLowerCase();
  if (type === 'application/json' || type === '') return 'json';
  if (YAML_TYPES.has(type)) return 'yaml';
  if (isProtobuf(type)) return 'protobuf';
  throw new ApiError(
    'UnsupportedMediaType',
    `the body's content type "${echo(type, 80)}" is not supported; send application/json or application/yaml`,
  );
}

/** A JSON body, within the parse limits: one object. */
function jsonObjectOf(text: string, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = parseJson(text, DEFAULT_PARSE_LIMITS, { rejectDuplicateKeys: true, what: 'the request body' });
  } catch (err) {
    throw parseApiError(err);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new ApiError('BadRequest', `the request body must be a JSON object ${what}`);
  return value as Record<string, unknown>;
}

/** The body of a create or update of a stored kind, as the apiserver's write request takes it. */
export async function readWriteBody(
  req: RestRequestMessage,
  kind: KindName,
): Promise<{ object: KubeObject; wireKind: KindName } | { manifest: string }> {
  const type = bodyTypeOf(req);
  if (type === 'protobuf')
    return { object: decodeKubeProtobuf(await readBytes(req)) as KubeObject, wireKind: kind };
  const text = await readBody(req);
  if (type === 'yaml') return { manifest: text };
  return {
    object: jsonObjectOf(text, 'with apiVersion, kind and metadata') as KubeObject,
    wireKind: kind,
  };
}

/**
 * A small request object that is not stored (DeleteOptions, an Eviction, an access review):
 * JSON or protobuf; an empty body is an empty object.
 */
export async function readOptionalObject(
  req: RestRequestMessage,
  kind: string,
): Promise<Record<string, unknown>> {
  const type = bodyTypeOf(req);
  if (type === 'yaml') throw new ApiError('UnsupportedMediaType', `send the ${kind} as application/json`);
  if (type === 'protobuf') {
    const bytes = await readBytes(req);
    if (!bytes.length) return {};
    const object = decodeKubeProtobuf(bytes);
    if (object.kind !== kind)
      throw new ApiError(
        'BadRequest',
        `the request body is a ${echo(String(object.kind), 60)}; send a ${kind}`,
      );
    return object;
  }
  const text = await readBody(req);
  return text.trim() ? jsonObjectOf(text, `(a ${kind})`) : {};
}

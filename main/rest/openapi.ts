/**
 * OpenAPI, generated from the one schema kubelab has: the protobuf messages (proto/gen/
 * schema.json) and the table of kinds. v3 carries the schemas (`kubectl explain`) and the
 * operations, whose `fieldValidation` parameter tells kubectl to leave validation to the
 * server (which rejects unknown and mistyped fields, naming them). v2 is what older clients
 * fetch first; it carries no schemas, so they validate nothing on their side either.
 */
import { createHash } from 'node:crypto';
import schemaJson from '../../proto/gen/schema.json' with { type: 'json' };
import type { KindInfo } from '../../client/api/kinds.js';
import { KUBERNETES_MINOR, subresourcesOf, verbsOf } from './discovery.js';
import { kindsOf, servedGroups } from './paths.js';

interface FieldSchema {
  type: string;
  repeated?: boolean;
  map?: boolean;
  /** The field's comment in the .proto file. */
  doc?: string;
}

const { messages, docs } = schemaJson as {
  messages: Record<string, Record<string, FieldSchema>>;
  /** Each message's comment in the .proto file. */
  docs: Record<string, string>;
};

const SCALARS: Record<string, Record<string, unknown>> = {
  string: { type: 'string' },
  bool: { type: 'boolean' },
  int32: { type: 'integer', format: 'int32' },
  uint32: { type: 'integer', format: 'int32' },
  int64: { type: 'integer', format: 'int64' },
  double: { type: 'number', format: 'double' },
  bytes: { type: 'string', format: 'byte' },
  // Kubernetes' IntOrString (maxUnavailable: 1 or "25%", a probe's port: 8080 or "http").
  'google.protobuf.Value': {
    'x-kubernetes-int-or-string': true,
    anyOf: [{ type: 'integer' }, { type: 'string' }],
  },
  'google.protobuf.Struct': { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
};

function schemaName(message: string): string {
  return `io.kubelab.${message.replace(/^kubelab\./, '')}`;
}

function fieldSchema(f: FieldSchema, referenced: Set<string>): Record<string, unknown> {
  let item = SCALARS[f.type];
  if (!item) {
    referenced.add(f.type);
    item = { $ref: `#/components/schemas/${schemaName(f.type)}` };
  }
  const description = f.doc ? { description: f.doc } : {};
  if (f.map) return { type: 'object', additionalProperties: item, ...description };
  if (f.repeated) return { type: 'array', items: item, ...description };
  // A $ref takes no siblings in OpenAPI 3.0: wrap it to carry the field's own description.
  if (f.doc && item.$ref) return { allOf: [item], ...description };
  return { ...item, ...description };
}

/** The schemas a group/version's kinds need, each message once. */
function schemasOf(kinds: KindInfo[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const pending = new Set(kinds.map((k) => k.messageType));
  const done = new Set<string>();
  while (pending.size) {
    const [message] = pending;
    pending.delete(message);
    if (done.has(message)) continue;
    done.add(message);
    const referenced = new Set<string>();
    const properties: Record<string, unknown> = {};
    for (const [name, f] of Object.entries(messages[message] ?? {}))
      properties[name] = fieldSchema(f, referenced);
    const kind = kinds.find((k) => k.messageType === message);
    out[schemaName(message)] = {
      type: 'object',
      properties,
      ...(docs[message] ? { description: docs[message] } : {}),
      ...(kind
        ? {
            description: docs[message] ?? `${kind.kind} (${kind.apiVersion}), as kubelab serves it.`,
            'x-kubernetes-group-version-kind': [
              { group: kind.group, version: kind.version, kind: kind.kind },
            ],
          }
        : {}),
    };
    for (const r of referenced) if (!done.has(r)) pending.add(r);
  }
  return out;
}

const QUERY = (name: string) => ({ name, in: 'query', schema: { type: 'string' }, uniqueItems: true });
const PATH = (name: string) => ({ name, in: 'path', required: true, schema: { type: 'string' } });

function operation(kind: KindInfo, action: string, ref: string, params: string[]): Record<string, unknown> {
  return {
    operationId: `${action}${kind.kind}`,
    parameters: params.map(QUERY),
    responses: { '200': { description: 'OK', content: { 'application/json': { schema: { $ref: ref } } } } },
    'x-kubernetes-action': action,
    'x-kubernetes-group-version-kind': { group: kind.group, version: kind.version, kind: kind.kind },
  };
}

function pathsOf(group: string, version: string): Record<string, unknown> {
  const base = group ? `/apis/${group}/${version}` : `/api/${version}`;
  const paths: Record<string, unknown> = {};
  for (const kind of kindsOf(group, version)) {
    const ref = `#/components/schemas/${schemaName(kind.messageType)}`;
    const verbs = new Set(verbsOf(kind));
    const scope = kind.namespaced
      ? `${base}/namespaces/{namespace}/${kind.resource}`
      : `${base}/${kind.resource}`;
    const scopeParams = kind.namespaced ? [PATH('namespace')] : [];
    const writes = ['dryRun', 'fieldManager', 'fieldValidation'];
    paths[scope] = {
      parameters: scopeParams,
      get: operation(kind, 'list', ref, [
        'labelSelector',
        'fieldSelector',
        'limit',
        'continue',
        'resourceVersion',
        'watch',
      ]),
      ...(verbs.has('create') ? { post: operation(kind, 'post', ref, writes) } : {}),
    };
    const item: Record<string, unknown> = {
      parameters: [...scopeParams, PATH('name')],
      get: operation(kind, 'get', ref, []),
    };
    if (verbs.has('update')) item.put = operation(kind, 'put', ref, writes);
    if (verbs.has('patch')) item.patch = operation(kind, 'patch', ref, [...writes, 'force']);
    if (verbs.has('delete'))
      item.delete = operation(kind, 'delete', ref, ['dryRun', 'gracePeriodSeconds', 'propagationPolicy']);
    paths[`${scope}/{name}`] = item;
    for (const sub of subresourcesOf(kind))
      paths[`${scope}/{name}/${sub.name}`] = {
        parameters: [...scopeParams, PATH('name')],
        get: operation(kind, 'get', ref, []),
        put: operation(kind, 'put', ref, writes),
        patch: operation(kind, 'patch', ref, [...writes, 'force']),
      };
  }
  return paths;
}

/** One group/version's document (/openapi/v3/api/v1, /openapi/v3/apis/apps/v1, …). */
export function openApiV3Document(group: string, version: string): Record<string, unknown> {
  return {
    openapi: '3.0.0',
    info: { title: 'kubelab', version: `v1.${KUBERNETES_MINOR}.0` },
    paths: pathsOf(group, version),
    components: { schemas: schemasOf(kindsOf(group, version)) },
  };
}

function gvPath(group: string, version: string): string {
  return group ? `apis/${group}/${version}` : `api/${version}`;
}

/** The schemas change only with the server's build: one hash per document, made once. */
const hashes = new Map<string, string>();
function hashOf(group: string, version: string): string {
  const key = gvPath(group, version);
  let h = hashes.get(key);
  if (!h) {
    h = createHash('sha512')
      .update(JSON.stringify(openApiV3Document(group, version)))
      .digest('hex')
      .slice(0, 128);
    hashes.set(key, h);
  }
  return h;
}

/** /openapi/v3: where each group/version's document is. */
export function openApiV3Root(): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  for (const { group, versions } of servedGroups())
    for (const version of versions)
      paths[gvPath(group, version)] = {
        serverRelativeURL: `/openapi/v3/${gvPath(group, version)}?hash=${hashOf(group, version)}`,
      };
  return { paths };
}

/** Which group/version a /openapi/v3/<path> names, if it is one served. */
export function openApiV3Target(rest: string[]): { group: string; version: string } | undefined {
  const [prefix, a, b] = rest;
  const gv =
    prefix === 'api' && rest.length === 2
      ? { group: '', version: a }
      : prefix === 'apis' && rest.length === 3
        ? { group: a, version: b }
        : undefined;
  return gv && kindsOf(gv.group, gv.version).length ? gv : undefined;
}

function varint(n: number): Buffer {
  const bytes: number[] = [];
  while (n > 0x7f) {
    bytes.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  bytes.push(n);
  return Buffer.from(bytes);
}

function field(number: number, value: Buffer): Buffer {
  return Buffer.concat([varint((number << 3) | 2), varint(value.length), value]);
}

/**
 * /openapi/v2, as client-go fetches it: protobuf (gnostic's openapi.v2.Document), or JSON when
 * asked. swagger "2.0", the info, and no paths or definitions.
 */
export function openApiV2(protobuf: boolean): { body: Buffer; contentType: string } {
  const info = { title: 'kubelab', version: `v1.${KUBERNETES_MINOR}.0` };
  if (!protobuf)
    return {
      body: Buffer.from(JSON.stringify({ swagger: '2.0', info, paths: {}, definitions: {} })),
      contentType: 'application/json',
    };
  const infoBytes = Buffer.concat([field(1, Buffer.from(info.title)), field(2, Buffer.from(info.version))]);
  return {
    body: Buffer.concat([field(1, Buffer.from('2.0')), field(2, infoBytes), field(8, Buffer.alloc(0))]),
    contentType: 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf',
  };
}

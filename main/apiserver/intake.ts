/**
 * Turns what a client sent (a typed object, or a JSON/YAML manifest) into a canonical object
 * of a known kind: the kind and apiVersion checked, every unknown or mistyped field reported
 * with its path, the size bounded. Nothing reaches the registry without passing here.
 */
import { parseAllDocuments } from 'yaml';
import { ApiError, invalid } from '../../client/api/errors.js';
import { resolveKind, knownKinds, type KindInfo } from '../../client/api/kinds.js';
import type { WriteRequest } from '../../client/api/local.js';
import { checkMessage } from '../../client/api/schema.js';
import type { KubeObject } from '../../client/api/types.js';
import type { FieldError } from '../../client/api/validation.js';

export const DEFAULT_MAX_OBJECT_BYTES = 1_572_864; // 1.5 MiB, etcd's default value limit

export function tooLarge(size: number, limit: number): ApiError {
  return new ApiError(
    'RequestEntityTooLarge',
    `the object is ${size} bytes, over the limit of ${limit} bytes; store large data outside the cluster and reference it`,
  );
}

function parseManifest(manifest: string, limit: number): Record<string, unknown> {
  if (manifest.length > limit * 2) throw tooLarge(manifest.length, limit);
  let docs;
  try {
    docs = parseAllDocuments(manifest, { uniqueKeys: true, prettyErrors: true });
  } catch (err) {
    throw new ApiError('BadRequest', `the manifest is not valid YAML or JSON: ${(err as Error).message}`);
  }
  const list = Array.isArray(docs) ? docs : [docs];
  const nonEmpty = list.filter((d) => d.contents !== null);
  if (nonEmpty.length !== 1) {
    throw new ApiError(
      'BadRequest',
      `the manifest holds ${nonEmpty.length} documents; send exactly one per request`,
    );
  }
  const doc = nonEmpty[0];
  if (doc.errors.length) {
    const e = doc.errors[0];
    throw new ApiError('BadRequest', `the manifest is not valid YAML or JSON: ${e.message}`);
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 50 });
  } catch (err) {
    throw new ApiError('BadRequest', `the manifest cannot be read: ${(err as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ApiError('BadRequest', 'the manifest must be an object with apiVersion, kind and metadata');
  }
  return value as Record<string, unknown>;
}

export interface Intake {
  info: KindInfo;
  object: KubeObject;
}

export function intakeObject(req: WriteRequest, limit: number): Intake {
  const fromManifest = req.manifest !== undefined && req.manifest !== '';
  if (fromManifest && req.object)
    throw new ApiError('BadRequest', 'send either object or manifest, not both');
  const raw: Record<string, unknown> | undefined = fromManifest
    ? parseManifest(req.manifest!, limit)
    : (req.object as Record<string, unknown> | undefined);
  if (!raw) throw new ApiError('BadRequest', 'the request carries no object; set object or manifest');

  const kindName = typeof raw.kind === 'string' && raw.kind ? raw.kind : req.wireKind;
  if (!kindName) throw new ApiError('BadRequest', `kind is required; one of: ${knownKinds()}`);
  const info = resolveKind(kindName);
  if (!info || (typeof raw.kind === 'string' && raw.kind && raw.kind !== info.kind)) {
    throw new ApiError('BadRequest', `unknown kind "${kindName}"; this server serves: ${knownKinds()}`);
  }
  if (req.wireKind && resolveKind(req.wireKind) !== info) {
    throw new ApiError(
      'BadRequest',
      `the object says kind "${String(raw.kind)}" but was sent as ${req.wireKind}`,
    );
  }
  if (raw.apiVersion !== undefined && raw.apiVersion !== info.apiVersion) {
    throw new ApiError(
      'BadRequest',
      `no kind "${info.kind}" is registered for apiVersion "${String(raw.apiVersion)}"; use apiVersion "${info.apiVersion}"`,
    );
  }
  if (fromManifest && raw.apiVersion === undefined) {
    throw new ApiError('BadRequest', `apiVersion is required; for ${info.kind} use "${info.apiVersion}"`);
  }

  const size = JSON.stringify(raw).length;
  if (size > limit) throw tooLarge(size, limit);

  const errors: FieldError[] = [];
  const canonical = checkMessage(info.messageType, raw, '', errors) ?? {};
  const name = (raw.metadata as { name?: unknown } | undefined)?.name;
  if (errors.length) throw invalid(info.kind, typeof name === 'string' ? name : '', errors);
  canonical.apiVersion = info.apiVersion;
  canonical.kind = info.kind;
  return { info, object: canonical as KubeObject };
}

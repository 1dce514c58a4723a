/**
 * Turns what a client sent (a typed object, or a manifest already read by ManifestReader)
 * into a canonical object of a known kind: the kind and apiVersion checked, every unknown or
 * mistyped field reported with its path, the size and shape bounded. Nothing reaches the
 * registry without passing here.
 */
import { ApiError, echo, invalid } from '../../client/api/errors.js';
import { resolveKind, knownKinds, type KindInfo } from '../../client/api/kinds.js';
import { checkMessage } from '../../client/api/schema.js';
import type { KubeObject } from '../../client/api/types.js';
import type { FieldError } from '../../client/api/validation.js';
import { DEFAULT_PARSE_LIMITS } from '../../client/parse/limits.js';
import { checkValueLimits } from '../../client/parse/measure.js';
import { parseApiError } from './manifests.js';

export const DEFAULT_MAX_OBJECT_BYTES = 1_572_864; // 1.5 MiB, etcd's default value limit

export function tooLarge(size: number, limit: number): ApiError {
  return new ApiError(
    'RequestEntityTooLarge',
    `the object is ${size} bytes, over the limit of ${limit} bytes; store large data outside the cluster and reference it`,
  );
}

export interface Intake {
  info: KindInfo;
  object: KubeObject;
}

export interface IntakeSource {
  /** The object as sent: typed, or read from a manifest. */
  raw: Record<string, unknown> | undefined;
  /** The kind the request names (its envelope, or the wire's typed field). */
  wireKind?: string;
  /** Read from a manifest: apiVersion and kind must be spelled out. */
  fromManifest?: boolean;
  /** Unknown fields: refused (Strict, the default), or dropped with a warning each (Warn) or silently (Ignore). */
  fieldValidation?: 'Strict' | 'Warn' | 'Ignore';
  warnings?: string[];
}

export function intakeObject(source: IntakeSource, limit: number): Intake {
  const { raw, wireKind, fromManifest } = source;
  if (!raw) throw new ApiError('BadRequest', 'the request carries no object; set object or manifest');
  // A typed object handed over in-process has not been through a parser's limits.
  try {
    checkValueLimits(raw, DEFAULT_PARSE_LIMITS);
  } catch (err) {
    throw parseApiError(err);
  }

  const kindName = typeof raw.kind === 'string' && raw.kind ? raw.kind : wireKind;
  if (!kindName) throw new ApiError('BadRequest', `kind is required; one of: ${knownKinds()}`);
  const info = resolveKind(kindName);
  if (!info || (typeof raw.kind === 'string' && raw.kind && raw.kind !== info.kind)) {
    throw new ApiError('BadRequest', `unknown kind "${echo(kindName)}"; this server serves: ${knownKinds()}`);
  }
  if (wireKind && resolveKind(wireKind) !== info) {
    throw new ApiError(
      'BadRequest',
      `the object says kind "${echo(String(raw.kind))}" but was sent as ${echo(wireKind)}`,
    );
  }
  if (raw.apiVersion !== undefined && raw.apiVersion !== info.apiVersion) {
    throw new ApiError(
      'BadRequest',
      `no kind "${info.kind}" is registered for apiVersion "${echo(String(raw.apiVersion))}"; use apiVersion "${info.apiVersion}"`,
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
  // The canonical copy leaves unknown fields out: Warn and Ignore keep it so.
  const dropped = source.fieldValidation === 'Warn' || source.fieldValidation === 'Ignore';
  const refused = dropped ? errors.filter((e) => e.type !== 'FieldValueUnknown') : errors;
  if (refused.length) throw invalid(info.kind, typeof name === 'string' ? name : '', refused);
  if (source.fieldValidation === 'Warn')
    for (const e of errors) source.warnings?.push(`unknown field "${echo(e.field, 200)}"`);
  canonical.apiVersion = info.apiVersion;
  canonical.kind = info.kind;
  return { info, object: canonical as KubeObject };
}

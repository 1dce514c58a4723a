/**
 * Strict structural checking of objects against the protobuf schema (proto/gen/schema.json):
 * every unknown field, wrong type or out-of-range integer is reported with its path, so a
 * manifest with a typo is rejected instead of silently losing the field. The same pass
 * returns the canonical form the apiserver stores: nulls, empty lists and empty maps dropped.
 */
import schemaJson from '../../proto/gen/schema.json' with { type: 'json' };
import { isPlainObject } from '../util/objects.js';
import type { FieldError } from './validation.js';

interface FieldSchema {
  id: number;
  type: string;
  repeated?: boolean;
  map?: boolean;
  keyType?: string;
}

const messages = (schemaJson as { messages: Record<string, Record<string, FieldSchema>> }).messages;

const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;

export function hasMessageType(typeName: string): boolean {
  return typeName in messages;
}

/** The field names of a message, for "did you mean" hints and completion. */
export function fieldNames(typeName: string): string[] {
  return Object.keys(messages[typeName] ?? {});
}

function joinPath(path: string, field: string): string {
  return path ? `${path}.${field}` : field;
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'an object';
  return `a ${typeof v}`;
}

/** Levenshtein-close names, so `contaners` suggests `containers`. */
function suggestion(name: string, candidates: string[]): string {
  const lower = name.toLowerCase();
  let best = '';
  let bestScore = Infinity;
  for (const c of candidates) {
    const score = distance(lower, c.toLowerCase());
    if (score < bestScore) {
      bestScore = score;
      best = c;
    }
  }
  return bestScore <= Math.max(2, Math.floor(name.length / 4)) ? `; did you mean "${best}"?` : '';
}

function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0];
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = row[j];
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = tmp;
    }
  }
  return row[b.length];
}

function checkScalar(type: string, value: unknown, path: string, errors: FieldError[]): unknown {
  switch (type) {
    case 'string':
      if (typeof value !== 'string') {
        errors.push({
          field: path,
          type: 'FieldValueTypeInvalid',
          value,
          message: `must be a string, not ${describe(value)}`,
        });
        return undefined;
      }
      return value;
    case 'bool':
      if (typeof value !== 'boolean') {
        errors.push({
          field: path,
          type: 'FieldValueTypeInvalid',
          value,
          message: `must be true or false, not ${describe(value)}`,
        });
        return undefined;
      }
      return value;
    case 'int32':
      if (typeof value !== 'number' || !Number.isInteger(value) || value < INT32_MIN || value > INT32_MAX) {
        errors.push({
          field: path,
          type: 'FieldValueTypeInvalid',
          value,
          message: 'must be a whole number between -2147483648 and 2147483647',
        });
        return undefined;
      }
      return value;
    case 'double':
    case 'float':
      if (typeof value !== 'number' || !Number.isFinite(value)) {
        errors.push({ field: path, type: 'FieldValueTypeInvalid', value, message: 'must be a number' });
        return undefined;
      }
      return value;
    default:
      errors.push({
        field: path,
        type: 'FieldValueTypeInvalid',
        value,
        message: `unsupported schema type ${type}`,
      });
      return undefined;
  }
}

/** Free-form JSON is bounded in depth: every reader of it recurses. */
const MAX_FREE_FORM_DEPTH = 32;

function depthOf(v: unknown, limit: number): number {
  if (typeof v !== 'object' || v === null) return 0;
  if (limit <= 0) return 1;
  let max = 0;
  for (const child of Object.values(v)) max = Math.max(max, depthOf(child, limit - 1));
  return max + 1;
}

function checkValue(field: FieldSchema, value: unknown, path: string, errors: FieldError[]): unknown {
  switch (field.type) {
    case 'google.protobuf.Value':
    case 'google.protobuf.Struct':
      // Free-form JSON (int-or-string fields, raw data); the kind's validation checks its meaning.
      if (field.type === 'google.protobuf.Struct' && !isPlainObject(value)) {
        errors.push({
          field: path,
          type: 'FieldValueTypeInvalid',
          value: describe(value),
          message: `must be an object, not ${describe(value)}`,
        });
        return undefined;
      }
      if (depthOf(value, MAX_FREE_FORM_DEPTH) > MAX_FREE_FORM_DEPTH) {
        errors.push({
          field: path,
          type: 'FieldValueInvalid',
          message: `must not nest deeper than ${MAX_FREE_FORM_DEPTH} levels`,
        });
        return undefined;
      }
      return value;
  }
  if (field.type in messages) return checkMessage(field.type, value, path, errors);
  return checkScalar(field.type, value, path, errors);
}

/**
 * Checks `value` against message `typeName`; returns the canonical copy (undefined when the
 * value itself is unusable). Errors are appended to `errors`.
 */
export function checkMessage(
  typeName: string,
  value: unknown,
  path: string,
  errors: FieldError[],
): Record<string, unknown> | undefined {
  const fields = messages[typeName];
  if (!fields) throw new Error(`no schema for ${typeName}`);
  if (!isPlainObject(value)) {
    errors.push({
      field: path || '<root>',
      type: 'FieldValueTypeInvalid',
      value: describe(value),
      message: `must be an object, not ${describe(value)}`,
    });
    return undefined;
  }
  const out: Record<string, unknown> = {};
  for (const name of Object.keys(value)) {
    const v = value[name];
    const fieldPath = joinPath(path, name);
    if (name === '_unknownFields') {
      // Left by the protobuf decoder: field numbers this server does not know.
      for (const num of Object.keys((v as object) ?? {})) {
        errors.push({
          field: joinPath(path, `#${num}`),
          type: 'FieldValueUnknown',
          message: `field number ${num} is not part of ${typeName}; the client is newer than the server: upgrade kubelab or drop the field`,
        });
      }
      continue;
    }
    const field = fields[name];
    if (!field) {
      errors.push({
        field: fieldPath,
        type: 'FieldValueUnknown',
        message: `${typeName.replace('kubelab.v1.', '')} has no field "${name}"${suggestion(name, Object.keys(fields))}`,
      });
      continue;
    }
    if (v === null || v === undefined) continue;
    if (field.map) {
      if (!isPlainObject(v)) {
        errors.push({
          field: fieldPath,
          type: 'FieldValueTypeInvalid',
          value: describe(v),
          message: `must be a map of ${field.type}, not ${describe(v)}`,
        });
        continue;
      }
      const m: Record<string, unknown> = {};
      let any = false;
      for (const k of Object.keys(v)) {
        const item = checkValue(field, v[k], `${fieldPath}[${k}]`, errors);
        if (item !== undefined) {
          m[k] = item;
          any = true;
        }
      }
      if (any) out[name] = m;
      continue;
    }
    if (field.repeated) {
      if (!Array.isArray(v)) {
        errors.push({
          field: fieldPath,
          type: 'FieldValueTypeInvalid',
          value: describe(v),
          message: `must be a list, not ${describe(v)}`,
        });
        continue;
      }
      const list: unknown[] = [];
      v.forEach((item, i) => {
        if (item === null || item === undefined) {
          errors.push({
            field: `${fieldPath}[${i}]`,
            type: 'FieldValueRequired',
            message: 'list items may not be null',
          });
          return;
        }
        const c = checkValue(field, item, `${fieldPath}[${i}]`, errors);
        if (c !== undefined) list.push(c);
      });
      if (list.length) out[name] = list;
      continue;
    }
    const c = checkValue(field, v, fieldPath, errors);
    if (c !== undefined) out[name] = c;
  }
  return out;
}

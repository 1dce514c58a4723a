/**
 * An object as YAML to edit, and back: `kubectl edit` without status (a subresource the
 * update would ignore) and without metadata.managedFields (the server keeps them when an
 * update leaves them out), with metadata.resourceVersion kept, so saving over someone
 * else's change fails with a conflict instead of undoing it — unless that change was only to
 * status, which the edit cannot have meant to undo.
 */
import { parseAllDocuments, stringify } from 'yaml';
import { deepEqual } from '../util/deepequal.js';
import type { LineError } from './fielderrors.js';

export function editableYaml(object: object): string {
  const {
    status: _status,
    metadata,
    ...rest
  } = object as {
    status?: unknown;
    metadata?: Record<string, unknown>;
  };
  const shown = metadata ? { ...rest, metadata: withoutManagedFields(metadata) } : rest;
  return stringify(shown, { indent: 2, lineWidth: 0 });
}

function withoutManagedFields(metadata: Record<string, unknown>): Record<string, unknown> {
  const { managedFields: _managed, ...rest } = metadata;
  return rest;
}

export type Parsed =
  { object: Record<string, unknown>; errors?: undefined } | { object?: undefined; errors: LineError[] };

/** The edited object, or what is wrong with the text, at its lines. */
export function parseEdited(text: string): Parsed {
  const docs = parseAllDocuments(text);
  const errors: LineError[] = [];
  for (const doc of docs) {
    for (const e of doc.errors)
      errors.push({ line: e.linePos?.[0].line ?? 1, message: e.message.split('\n')[0] });
  }
  if (errors.length) return { errors };
  const values = [...docs].map((d) => d.toJS() as unknown).filter((v) => v !== null && v !== undefined);
  if (values.length !== 1) {
    return {
      errors: [{ line: 1, message: `expected one object, found ${values.length}: edit a single document` }],
    };
  }
  const [value] = values;
  if (typeof value !== 'object' || Array.isArray(value)) {
    return { errors: [{ line: 1, message: 'expected an object with apiVersion, kind, metadata and spec' }] };
  }
  return { object: value as Record<string, unknown> };
}

/**
 * The object without what its controllers keep changing: status, and with it the
 * resourceVersion and the status writer's managedFields entry.
 */
function editablePart(object: object): unknown {
  const {
    status: _status,
    metadata,
    ...rest
  } = object as { status?: unknown; metadata?: Record<string, unknown> };
  const { resourceVersion: _rv, ...meta } = withoutManagedFields(metadata ?? {});
  return { ...rest, metadata: meta };
}

/**
 * Whether `latest` differs from `opened` only in status (and so in resourceVersion): a
 * controller reported progress while the user edited, which is no reason to refuse the edit.
 */
export function changedOnlyInStatus(opened: object, latest: object): boolean {
  return deepEqual(editablePart(opened), editablePart(latest));
}

/**
 * A client's patch: read within the parse limits, then applied to the current object — RFC
 * 7386 JSON merge patch or RFC 6902 JSON patch. Failures are BadRequest errors that say which
 * operation failed and why.
 */
import jsonPatch, { type Operation } from 'fast-json-patch';
import mergePatch from 'json-merge-patch';
import { ApiError, echo } from '../../client/api/errors.js';
import { parseJson } from '../../client/parse/json.js';
import { DEFAULT_PARSE_LIMITS, MAX_REQUEST_BYTES } from '../../client/parse/limits.js';
import { applyStrategicMergePatch } from './strategicmerge.js';

/** Kubernetes' cap on the operations of one JSON patch. */
export const MAX_JSON_PATCH_OPERATIONS = 10_000;
/** What the `copy` operations of one JSON patch may duplicate in all. */
export const MAX_JSON_PATCH_COPIED_BYTES = MAX_REQUEST_BYTES;

const PATCH_TYPES: Record<string, 'merge' | 'json' | 'strategic'> = {
  merge: 'merge',
  'application/merge-patch+json': 'merge',
  json: 'json',
  'application/json-patch+json': 'json',
  strategic: 'strategic',
  'application/strategic-merge-patch+json': 'strategic',
};

/** "merge", "json" or "strategic" for a patch type by either of its names; undefined if unknown. */
export function patchKind(patchType: string): 'merge' | 'json' | 'strategic' | undefined {
  return PATCH_TYPES[patchType];
}

function unsupported(patchType: string): ApiError {
  return new ApiError(
    'BadRequest',
    `patchType "${echo(patchType)}" is not supported; use "merge" (JSON merge patch), "json" (JSON patch) or "strategic" (strategic merge patch)`,
  );
}

/**
 * The patch document of a request, parsed within the limits and checked for what no patch may
 * do: more than 10,000 operations, or moving a value into one of its own children.
 */
export function readPatch(patchType: string, text: string): unknown {
  const type = PATCH_TYPES[patchType];
  if (!type) throw unsupported(patchType);
  const document = parseJson(text, DEFAULT_PARSE_LIMITS, { what: 'the patch' });
  if (type === 'json' && Array.isArray(document)) {
    if (document.length > MAX_JSON_PATCH_OPERATIONS)
      throw new ApiError(
        'RequestEntityTooLarge',
        `the JSON patch has ${document.length} operations, over the limit of ${MAX_JSON_PATCH_OPERATIONS}; split it into several patches`,
      );
    for (const [i, op] of document.entries()) {
      const o = op as { op?: unknown; from?: unknown; path?: unknown } | null;
      if (typeof o !== 'object' || o === null || Array.isArray(o))
        throw new ApiError('BadRequest', `the JSON patch cannot be applied: operation ${i} is not an object`);
      if (
        o.op === 'move' &&
        typeof o.from === 'string' &&
        typeof o.path === 'string' &&
        o.path.startsWith(`${o.from}/`)
      )
        throw new ApiError(
          'BadRequest',
          `the JSON patch cannot be applied: operation ${i} moves "${echo(o.from)}" into one of its own children ("${echo(o.path)}")`,
        );
    }
  }
  return document;
}

export function applyPatch(patchType: string, target: unknown, document: unknown, kind: string): unknown {
  switch (patchType) {
    case 'strategic':
    case 'application/strategic-merge-patch+json':
      return applyStrategicMergePatch(kind, target, document);
    case 'merge':
    case 'application/merge-patch+json':
      if (typeof document !== 'object' || document === null || Array.isArray(document)) {
        throw new ApiError(
          'BadRequest',
          'a merge patch must be a JSON object, e.g. {"metadata":{"labels":{"tier":"web"}}}',
        );
      }
      return mergePatch.apply(target, document);
    case 'json':
    case 'application/json-patch+json': {
      if (!Array.isArray(document)) {
        throw new ApiError(
          'BadRequest',
          'a JSON patch must be a list of operations, e.g. [{"op":"replace","path":"/spec/unschedulable","value":true}]',
        );
      }
      // One operation at a time, each validated against the document as it is by then, so that
      // what `copy` duplicates is counted as it happens: doubling a value 30 times would need
      // gigabytes (Kubernetes caps the bytes copied the same way).
      let doc = target;
      let copiedBytes = 0;
      for (const [i, op] of (document as Operation[]).entries()) {
        try {
          doc = jsonPatch.applyOperation(doc, op, true, true, true, i).newDocument;
        } catch (err) {
          throw new ApiError('BadRequest', `the JSON patch cannot be applied: ${describe(err)}`);
        }
        if (op.op === 'copy') {
          copiedBytes += JSON.stringify(jsonPatch.getValueByPointer(doc, op.path) ?? null).length;
          if (copiedBytes > MAX_JSON_PATCH_COPIED_BYTES)
            throw new ApiError(
              'RequestEntityTooLarge',
              `the JSON patch copies more than ${MAX_JSON_PATCH_COPIED_BYTES} bytes (at operation ${i}); copy less, or send the values themselves`,
            );
        }
      }
      return doc;
    }
    default:
      throw unsupported(patchType);
  }
}

function describe(err: unknown): string {
  const e = err as {
    name?: string;
    message?: string;
    index?: number;
    operation?: { op?: string; path?: string };
  };
  const first = echo((e.message ?? String(err)).split('\n')[0], 300);
  const where = e.operation
    ? ` (operation ${e.index ?? ''} ${echo(String(e.operation.op), 20)} ${echo(String(e.operation.path))})`
    : '';
  return `${first}${where}`;
}

/**
 * Applies a client's patch to the current object: RFC 7386 JSON merge patch or RFC 6902 JSON
 * patch. Failures are BadRequest errors that say which operation failed and why.
 */
import jsonPatch, { type Operation } from 'fast-json-patch';
import mergePatch from 'json-merge-patch';
import { ApiError } from '../../client/api/errors.js';

export function applyPatch(patchType: string, target: unknown, document: unknown): unknown {
  switch (patchType) {
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
      const invalid = jsonPatch.validate(document as Operation[], target);
      if (invalid) throw new ApiError('BadRequest', `the JSON patch cannot be applied: ${describe(invalid)}`);
      try {
        return jsonPatch.applyPatch(target, document as Operation[], false, true).newDocument;
      } catch (err) {
        throw new ApiError('BadRequest', `the JSON patch cannot be applied: ${describe(err)}`);
      }
    }
    default:
      throw new ApiError(
        'BadRequest',
        `patchType "${patchType}" is not supported; use "merge" (JSON merge patch) or "json" (JSON patch)`,
      );
  }
}

function describe(err: unknown): string {
  const e = err as {
    name?: string;
    message?: string;
    index?: number;
    operation?: { op?: string; path?: string };
  };
  const first = (e.message ?? String(err)).split('\n')[0];
  const where = e.operation ? ` (operation ${e.index ?? ''} ${e.operation.op} ${e.operation.path})` : '';
  return `${first}${where}`;
}

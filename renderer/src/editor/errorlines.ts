/**
 * What goes on which line of the YAML editor: the API's field errors, each at the line of its
 * field, and YAML syntax errors at the line the parser stopped. Errors that name no field (or
 * a field not in the text) are left for the summary under the editor.
 */
import { parseAllDocuments } from 'yaml';
import { formatFieldError, type FieldError } from '../../../client/api/validation.js';
import { BridgeRequestError } from '../bridge/client.js';
import type { LineError } from './fielderrors.js';
import { locateField } from './yamlpath.js';

export interface PlacedErrors {
  lines: LineError[];
  /** Errors with no line of their own. */
  unplaced: FieldError[];
}

/** A field error as the API words it, without the field (the line already shows where). */
export function describeCause(cause: FieldError): string {
  return formatFieldError({ ...cause, field: '' });
}

export function placeFieldErrors(text: string, causes: readonly FieldError[]): PlacedErrors {
  const lines: LineError[] = [];
  const unplaced: FieldError[] = [];
  for (const cause of causes) {
    const at = cause.field ? locateField(text, cause.field) : undefined;
    if (!at) {
      unplaced.push(cause);
      continue;
    }
    const message = describeCause(cause);
    lines.push({
      line: at.line,
      field: cause.field,
      // A missing field is marked at its parent: say what is missing there.
      message: at.exact ? message : `${cause.field.split('.').pop()}: ${message}`,
    });
  }
  return { lines, unplaced };
}

/** YAML syntax errors, each at its line; empty when the text parses. */
export function yamlSyntaxErrors(text: string): LineError[] {
  const errors: LineError[] = [];
  for (const doc of parseAllDocuments(text)) {
    for (const e of doc.errors) {
      errors.push({ line: e.linePos?.[0].line ?? 1, message: e.message.split('\n')[0] });
    }
  }
  return errors;
}

/** What a failed apply or save of `text` shows: a headline, the marked lines, and the rest. */
export interface TextFailure extends PlacedErrors {
  headline: string;
  /** The API's reason (Conflict, Invalid, …), when the error came from it. */
  reason?: string;
  /** Every field error the API named, placed or not. */
  causes: FieldError[];
}

export function textFailure(text: string, err: unknown): TextFailure {
  const message = err instanceof Error ? err.message : String(err);
  const causes = err instanceof BridgeRequestError ? err.causes : [];
  const placed = placeFieldErrors(text, causes);
  const marked = new Set(placed.lines.map((l) => l.line)).size;
  const first = message.split('\n')[0].replace(/:\s*$/, '');
  return {
    ...placed,
    causes,
    reason: err instanceof BridgeRequestError ? err.reason : undefined,
    headline: marked
      ? `${first}: ${marked === 1 ? 'see the marked line' : `see the ${marked} marked lines`}`
      : first,
  };
}

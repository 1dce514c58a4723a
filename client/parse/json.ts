/**
 * JSON from a client, within limits. One linear pass over the text checks nesting depth, the
 * number of values, key lengths, `__proto__` keys and (for manifests) duplicate keys, and
 * stops at the first excess; only then does the engine's JSON.parse, which is fast and does
 * not recurse, build the value. So a 3 MiB document nested a million levels deep costs one
 * scan of its bytes, and whatever walks the parsed value later (schema checks, patches,
 * copies) never meets a depth JavaScript's stack cannot take.
 */
import {
  DEFAULT_PARSE_LIMITS,
  forbiddenKey,
  keyTooLong,
  SyntaxParseError,
  tooDeep,
  tooManyBytes,
  tooManyValues,
  type ParseLimits,
} from './limits.js';
import { formatPath, type PathSegment } from './path.js';

export interface JsonParseOptions {
  /** Refuse an object that names a key twice (Kubernetes' strict decoding); JSON.parse keeps the last. */
  rejectDuplicateKeys?: boolean;
  /** What the text is, for messages ("the patch", "the manifest"). */
  what?: string;
}

interface Frame {
  array: boolean;
  /** Objects: the key whose value is being read; lists: the index. */
  at: PathSegment;
  keys?: Set<string>;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/** Characters that start a number or a literal (true, false, null). */
function startsScalar(c: number): boolean {
  return c === 0x2d || (c >= 0x30 && c <= 0x39) || c === 0x74 || c === 0x66 || c === 0x6e;
}

function isScalarChar(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x7a) || c === 0x2b || c === 0x2d || c === 0x2e;
}

/** Where a string that starts at `start` (its opening quote) ends: the index of its closing quote, or -1. */
function stringEnd(text: string, start: number): number {
  let j = start + 1;
  for (;;) {
    j = text.indexOf('"', j);
    if (j < 0) return -1;
    let backslashes = 0;
    while (text.charCodeAt(j - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return j;
    j++;
  }
}

/** The path of the value being read in the innermost collection. */
function pathOf(stack: readonly Frame[]): string {
  return formatPath(stack.slice(1).map((f) => f.at));
}

/** The path of the innermost collection itself (where a key is being read). */
function collectionPath(stack: readonly Frame[]): string {
  return formatPath(stack.slice(1, -1).map((f) => f.at));
}

/**
 * Checks `text` against the limits without building anything. Syntax errors are left to
 * JSON.parse, which reports them; this pass only has to be right about well-formed JSON.
 */
export function scanJson(text: string, limits: ParseLimits, options: JsonParseOptions = {}): void {
  const stack: Frame[] = [{ array: true, at: 0 }];
  let values = 0;
  let expectingKey = false;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const end = stringEnd(text, i);
      if (end < 0) return; // Unterminated: JSON.parse says where.
      const top = stack[stack.length - 1];
      if (expectingKey) {
        const raw = text.slice(i + 1, end);
        if (raw.length > limits.maxKeyLength) throw keyTooLong(raw.length, limits, collectionPath(stack));
        const key = raw.includes('\\') ? decodeKey(raw) : raw;
        if (key === '__proto__') throw forbiddenKey(collectionPath(stack));
        if (options.rejectDuplicateKeys) {
          const keys = (top.keys ??= new Set());
          if (keys.has(key)) {
            top.at = key;
            throw new SyntaxParseError(
              `${options.what ?? 'the document'} names the key "${formatPath([key])}" twice (at ${pathOf(stack)}); keep one`,
            );
          }
          keys.add(key);
        }
        top.at = key;
        expectingKey = false;
      } else if (++values > limits.maxValues) throw tooManyValues(limits);
      i = end;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++values > limits.maxValues) throw tooManyValues(limits);
      const array = c === OPEN_BRACKET;
      stack.push({ array, at: array ? 0 : '' });
      if (stack.length - 1 > limits.maxDepth) throw tooDeep(limits, pathOf(stack.slice(0, -1)));
      expectingKey = !array;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      if (stack.length > 1) stack.pop();
      expectingKey = false;
    } else if (c === COMMA) {
      const top = stack[stack.length - 1];
      if (top.array) top.at = (top.at as number) + 1;
      else expectingKey = true;
    } else if (startsScalar(c)) {
      if (++values > limits.maxValues) throw tooManyValues(limits);
      while (i + 1 < n && isScalarChar(text.charCodeAt(i + 1))) i++;
    }
  }
}

function decodeKey(raw: string): string {
  try {
    return JSON.parse(`"${raw}"`) as string;
  } catch {
    return raw; // A bad escape: JSON.parse of the whole text reports it.
  }
}

/** V8's messages quote part of the input; keep them short whatever the input. */
function syntaxError(err: unknown, what: string): SyntaxParseError {
  const message = String((err as Error)?.message ?? err);
  const shown = message.length > 200 ? `${message.slice(0, 200)}…` : message;
  return new SyntaxParseError(`${what} is not valid JSON: ${shown}`);
}

/** Parses JSON from a client, refusing what goes beyond `limits` before building anything. */
export function parseJson(
  text: string,
  limits: ParseLimits = DEFAULT_PARSE_LIMITS,
  options: JsonParseOptions = {},
): unknown {
  const what = options.what ?? 'the document';
  // UTF-16 units undercount multi-byte characters: count bytes only when it may matter.
  if (text.length > limits.maxBytes / 3) {
    const bytes = Buffer.byteLength(text);
    if (bytes > limits.maxBytes) throw tooManyBytes(bytes, limits, what);
  }
  scanJson(text, limits, options);
  try {
    return JSON.parse(text);
  } catch (err) {
    throw syntaxError(err, what);
  }
}

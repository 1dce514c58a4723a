/**
 * The limits every parser of a client's bytes enforces while it parses, so that what a
 * rejected request costs is proportional to its bytes and small: JavaScript's recursion fails
 * at a depth of one or two thousand, and a few megabytes of tiny YAML items cost a gigabyte.
 * Kubernetes refuses request bodies over 3 MiB and JSON patches over 10,000 operations; its
 * 10,000-level depth limit is far beyond what JavaScript survives, and no real manifest
 * nests more than a few dozen levels.
 */

export interface ParseLimits {
  /** Characters of the whole text. */
  maxBytes: number;
  /** Levels of nested objects and lists; the document itself is level 1. */
  maxDepth: number;
  /** Values (objects, lists and scalars), counted after YAML aliases are expanded. */
  maxValues: number;
  /** Characters of one object key. */
  maxKeyLength: number;
  /**
   * YAML: lexical tokens. The yaml library's time and the syntax tree it holds (~450 bytes a
   * token) grow per token, several per value: 50,000 is some 7,000 lines, ~25 MB while parsed.
   */
  maxYamlTokens: number;
  /**
   * YAML: alias nodes (`*name`) in the whole text; also the yaml library's bound on what they
   * expand to (each use weighted by the aliases inside what it repeats).
   */
  maxYamlAliases: number;
  /** YAML streams: documents separated by `---`. */
  maxDocuments: number;
}

/** Kubernetes' request body limit. */
export const MAX_REQUEST_BYTES = 3 * 1024 * 1024;

export const DEFAULT_PARSE_LIMITS: Readonly<ParseLimits> = Object.freeze({
  maxBytes: MAX_REQUEST_BYTES,
  maxDepth: 100,
  maxValues: 200_000,
  maxKeyLength: 1024,
  maxYamlTokens: 50_000,
  maxYamlAliases: 100,
  maxDocuments: 100,
});

export type LimitKind =
  'bytes' | 'depth' | 'values' | 'keyLength' | 'forbiddenKey' | 'yamlTokens' | 'aliases' | 'documents';

/**
 * A document that goes beyond one of the limits. `tooLarge` says the request as a whole is
 * too big (HTTP 413, gRPC RESOURCE_EXHAUSTED); the others say its shape is not acceptable
 * (HTTP 400, INVALID_ARGUMENT).
 */
export class ParseLimitError extends Error {
  constructor(
    readonly limit: LimitKind,
    message: string,
  ) {
    super(message);
    this.name = 'ParseLimitError';
  }

  get tooLarge(): boolean {
    return this.limit === 'bytes';
  }
}

/** A document that is not valid JSON or YAML; the message points at the place (line, column or offset). */
export class SyntaxParseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SyntaxParseError';
  }
}

export function tooManyBytes(size: number, limits: ParseLimits, what = 'the document'): ParseLimitError {
  return new ParseLimitError(
    'bytes',
    `${what} is ${size} bytes, over the limit of ${limits.maxBytes} bytes; store large data outside the cluster and reference it`,
  );
}

export function tooDeep(limits: ParseLimits, where: string): ParseLimitError {
  return new ParseLimitError(
    'depth',
    `the document nests more than ${limits.maxDepth} levels deep${where ? ` (at ${where})` : ''}; no Kubernetes object needs that many: flatten it`,
  );
}

export function tooManyValues(limits: ParseLimits): ParseLimitError {
  return new ParseLimitError(
    'values',
    `the document holds more than ${limits.maxValues} values; split it into several objects`,
  );
}

export function keyTooLong(length: number, limits: ParseLimits, where: string): ParseLimitError {
  return new ParseLimitError(
    'keyLength',
    `a key${where ? ` in ${where}` : ''} is ${length} characters long, over the limit of ${limits.maxKeyLength}; use shorter keys`,
  );
}

export function forbiddenKey(where: string): ParseLimitError {
  return new ParseLimitError(
    'forbiddenKey',
    `the key "__proto__"${where ? ` in ${where}` : ''} is not allowed (it is no field of any object); remove it`,
  );
}

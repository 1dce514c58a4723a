/**
 * YAML from a client, within limits. The yaml library is driven one lexical token at a time
 * (lexer → parser → composer, its own pipeline), so the limits are checked while it parses:
 * the token count (its cost, and the memory its syntax tree takes, grow per token), the
 * parser's nesting depth (composing and converting recurse that deep), the number of aliases
 * and documents. Values are checked once more after conversion, where aliases have expanded.
 *
 * The work is a generator that pauses every few thousand tokens: `parseYaml` runs it to the
 * end at once (labctl, tests), `parseYamlYielding` lets other work run at each pause (the
 * server, so that one large manifest never stalls every other client).
 */
import { Composer, isScalar, LineCounter, Lexer, Parser, visit, type Document } from 'yaml';
import { checkValueLimits } from './measure.js';
import {
  DEFAULT_PARSE_LIMITS,
  ParseLimitError,
  SyntaxParseError,
  tooDeep,
  tooManyBytes,
  type ParseLimits,
} from './limits.js';

/** Tokens between pauses: a few milliseconds of the yaml library's work. */
const TOKENS_PER_SLICE = 2048;

const MAX_ERROR_MESSAGE = 300;

export interface YamlParseOptions {
  /** What the text is, for messages ("the manifest"). */
  what?: string;
}

function position(lines: LineCounter, offset: number): string {
  const { line, col } = lines.linePos(offset);
  return `line ${line}, column ${col}`;
}

function shorten(message: string): string {
  return message.length > MAX_ERROR_MESSAGE ? `${message.slice(0, MAX_ERROR_MESSAGE)}…` : message;
}

/** The library's errors know their offset; say the line and column, not the text around it. */
function syntaxError(what: string, lines: LineCounter, error: { message: string; pos: [number, number] }) {
  const at = error.pos[0] >= 0 ? ` at ${position(lines, error.pos[0])}` : '';
  return new SyntaxParseError(`${what} is not valid YAML${at}: ${shorten(error.message)}`);
}

/**
 * Kubernetes refuses a mapping that names a key twice. The library can check that itself, but
 * pair by pair (a manifest of 20,000 keys took seconds): one set per mapping instead.
 */
function duplicateKeyError(
  doc: Document.Parsed,
  what: string,
  lines: LineCounter,
): SyntaxParseError | undefined {
  let found: SyntaxParseError | undefined;
  visit(doc, {
    Map(_, map) {
      const seen = new Set<string>();
      for (const pair of map.items) {
        if (!isScalar(pair.key)) continue;
        const key = String(pair.key.value);
        if (seen.has(key)) {
          const offset = pair.key.range?.[0] ?? -1;
          found = new SyntaxParseError(
            `${what} names the key "${shorten(key)}" twice${offset >= 0 ? ` (at ${position(lines, offset)})` : ''}; keep one`,
          );
          return visit.BREAK;
        }
        seen.add(key);
      }
      return undefined;
    },
  });
  return found;
}

/** The documents of a YAML stream as plain values (null for an empty document). */
export function* yamlSteps(
  text: string,
  limits: ParseLimits,
  options: YamlParseOptions = {},
): Generator<void, unknown[], void> {
  const what = options.what ?? 'the document';
  if (text.length > limits.maxBytes / 3) {
    const bytes = Buffer.byteLength(text);
    if (bytes > limits.maxBytes) throw tooManyBytes(bytes, limits, what);
  }
  const lines = new LineCounter();
  lines.addNewLine(0);
  const parser = new Parser(lines.addNewLine);
  const composer = new Composer({ uniqueKeys: false });
  const docs: Document.Parsed[] = [];
  const collect = (produced: Iterable<Document.Parsed>) => {
    for (const doc of produced) {
      docs.push(doc);
      if (docs.length > limits.maxDocuments)
        throw new ParseLimitError(
          'documents',
          `${what} holds more than ${limits.maxDocuments} documents; apply it in parts`,
        );
    }
  };
  let tokens = 0;
  let aliases = 0;
  for (const lexeme of new Lexer().lex(text)) {
    if (++tokens > limits.maxYamlTokens)
      throw new ParseLimitError(
        'yamlTokens',
        `${what} is too complex: more than ${limits.maxYamlTokens} YAML tokens (stopped at ${position(lines, parser.offset)}); split it, or send it as JSON`,
      );
    if (lexeme.charCodeAt(0) === 0x2a && ++aliases > limits.maxYamlAliases)
      throw new ParseLimitError(
        'aliases',
        `${what} uses more than ${limits.maxYamlAliases} aliases (*name); write the values out`,
      );
    for (const token of parser.next(lexeme)) collect(composer.next(token));
    // The stack holds the document and every collection open around this token.
    if (parser.stack.length > limits.maxDepth + 1) throw tooDeep(limits, position(lines, parser.offset));
    if (tokens % TOKENS_PER_SLICE === 0) yield;
  }
  for (const token of parser.end()) collect(composer.next(token));
  collect(composer.end());

  const values: unknown[] = [];
  for (const [i, doc] of docs.entries()) {
    const where = docs.length > 1 ? ` (document ${i + 1})` : '';
    if (doc.errors.length) throw syntaxError(`${what}${where}`, lines, doc.errors[0]);
    const duplicate = duplicateKeyError(doc, `${what}${where}`, lines);
    if (duplicate) throw duplicate;
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: limits.maxYamlAliases });
    } catch (err) {
      const message = String((err as Error)?.message ?? err);
      if (/resource exhaustion/i.test(message))
        throw new ParseLimitError(
          'aliases',
          `${what}${where} repeats too much through aliases (*name); write the values out`,
        );
      throw new SyntaxParseError(`${what}${where} cannot be read: ${shorten(message)}`);
    }
    checkValueLimits(value, limits);
    values.push(value ?? null);
  }
  return values;
}

/** Parses a YAML stream at once (for a client's own files, or in tests). */
export function parseYaml(
  text: string,
  limits: ParseLimits = DEFAULT_PARSE_LIMITS,
  options: YamlParseOptions = {},
): unknown[] {
  const steps = yamlSteps(text, limits, options);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/** Parses a YAML stream, letting other work run every few thousand tokens. */
export async function parseYamlYielding(
  text: string,
  pause: () => Promise<void>,
  limits: ParseLimits = DEFAULT_PARSE_LIMITS,
  options: YamlParseOptions = {},
): Promise<unknown[]> {
  const steps = yamlSteps(text, limits, options);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    await pause();
  }
}

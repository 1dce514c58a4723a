/**
 * Manifests as clients send them — a JSON or YAML document as text — turned into plain values
 * within the parse limits (client/parse). JSON is checked in one pass and built by the engine;
 * YAML goes through the yaml library, which costs far more per byte, so its parsing pauses
 * every few thousand tokens (other clients' calls run meanwhile), one document is parsed at a
 * time (its syntax tree is what takes memory), and a queue that grows too long is refused
 * rather than left to grow.
 */
import pLimit from 'p-limit';
import { ApiError } from '../../client/api/errors.js';
import { parseJson } from '../../client/parse/json.js';
import {
  DEFAULT_PARSE_LIMITS,
  ParseLimitError,
  SyntaxParseError,
  type ParseLimits,
} from '../../client/parse/limits.js';
import { parseYamlYielding } from '../../client/parse/yaml.js';
import { nextTurn } from '../../client/util/nextturn.js';

/** YAML documents parsed at the same time (each syntax tree takes up to ~25 MB while parsed). */
const YAML_AT_ONCE = 1;
/** YAML documents waiting their turn before more are refused. */
const YAML_WAITING = 16;

/** A parser's refusal as the API error a client gets: too big is 413 / RESOURCE_EXHAUSTED, the rest 400. */
export function parseApiError(err: unknown): unknown {
  if (err instanceof ParseLimitError)
    return new ApiError(err.tooLarge ? 'RequestEntityTooLarge' : 'BadRequest', err.message);
  if (err instanceof SyntaxParseError) return new ApiError('BadRequest', err.message);
  return err;
}

function looksLikeJson(text: string): boolean {
  const first = /\S/.exec(text.slice(0, 1024));
  return first?.[0] === '{' || first?.[0] === '[';
}

export class ManifestReader {
  private readonly yamlGate = pLimit(YAML_AT_ONCE);

  constructor(private readonly limits: ParseLimits = DEFAULT_PARSE_LIMITS) {}

  /** The documents of a manifest (null for an empty document); `what` names it in messages. */
  async readAll(text: string, what = 'the manifest'): Promise<unknown[]> {
    try {
      if (looksLikeJson(text)) {
        try {
          return [parseJson(text, this.limits, { rejectDuplicateKeys: true, what })];
        } catch (err) {
          // A YAML flow mapping ({kind: Pod, ...}) also starts with a brace.
          if (!(err instanceof SyntaxParseError)) throw err;
        }
      }
      return await this.readYaml(text, what);
    } catch (err) {
      throw parseApiError(err);
    }
  }

  /** The one object a Create or Update carries. */
  async readObject(text: string): Promise<Record<string, unknown>> {
    const docs = (await this.readAll(text)).filter((d) => d !== null && d !== undefined);
    if (docs.length !== 1) {
      throw new ApiError(
        'BadRequest',
        `the manifest holds ${docs.length} documents; send exactly one per request`,
      );
    }
    const value = docs[0];
    if (typeof value !== 'object' || Array.isArray(value))
      throw new ApiError('BadRequest', 'the manifest must be an object with apiVersion, kind and metadata');
    return value as Record<string, unknown>;
  }

  private readYaml(text: string, what: string): Promise<unknown[]> {
    if (this.yamlGate.pendingCount >= YAML_WAITING) {
      throw new ApiError(
        'TooManyRequests',
        `the server is reading ${this.yamlGate.activeCount + this.yamlGate.pendingCount} YAML manifests already; try again in a moment, or send JSON`,
        { retryAfterSeconds: 1 },
      );
    }
    return this.yamlGate(() => parseYamlYielding(text, nextTurn, this.limits, { what }));
  }
}

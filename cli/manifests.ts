/**
 * Manifests for apply, create and delete -f: files, folders (their .yaml, .yml and .json
 * files, sorted; -R for subfolders) and stdin ("-"), each possibly holding several YAML
 * documents or a v1 List. Every object is checked against the schema here, so a typo is an
 * error with its field path instead of a field silently dropped on the wire.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { invalid } from '../client/api/errors.js';
import type { KindInfo } from '../client/api/kinds.js';
import { knownKinds, resolveKind } from '../client/api/kinds.js';
import { checkMessage } from '../client/api/schema.js';
import type { KubeObject } from '../client/api/types.js';
import type { FieldError } from '../client/api/validation.js';
import {
  DEFAULT_PARSE_LIMITS,
  ParseLimitError,
  SyntaxParseError,
  type ParseLimits,
} from '../client/parse/limits.js';
import { parseYaml } from '../client/parse/yaml.js';
import { CliError } from './errors.js';
import { readAll, type Io } from './io.js';

export interface Manifest {
  /** Where it came from, for messages: a path or "STDIN". */
  source: string;
  info: KindInfo;
  /** The canonical object (schema-checked; nulls and empty parts dropped). */
  object: KubeObject;
}

const MANIFEST_FILE = /\.(ya?ml|json)$/i;

function filesOf(path: string, recursive: boolean): string[] {
  let st;
  try {
    st = statSync(path);
  } catch {
    throw new CliError(`the path "${path}" does not exist`);
  }
  if (!st.isDirectory()) return [path];
  return readdirSync(path)
    .sort()
    .flatMap((name) => {
      const p = join(path, name);
      if (statSync(p).isDirectory()) return recursive ? filesOf(p, true) : [];
      return MANIFEST_FILE.test(name) ? [p] : [];
    });
}

/**
 * What labctl reads of a person's own files: a folder's worth of objects may be big, but the
 * nesting is limited as the server limits it (JavaScript's recursion would fail first), and
 * the server still refuses any one object over its limits.
 */
const FILE_LIMITS: ParseLimits = {
  ...DEFAULT_PARSE_LIMITS,
  maxBytes: 256 * 1024 * 1024,
  maxYamlTokens: 50_000_000,
  maxDocuments: 100_000,
};

/** The documents of one text: each a plain object; a v1 List contributes its items. */
export function parseDocuments(text: string, source: string): Record<string, unknown>[] {
  let docs: unknown[];
  try {
    docs = parseYaml(text, FILE_LIMITS, { what: 'the input' });
  } catch (err) {
    if (err instanceof ParseLimitError || err instanceof SyntaxParseError)
      throw new CliError(`error parsing ${source}: ${err.message}`);
    throw err;
  }
  const out: Record<string, unknown>[] = [];
  for (const value of docs) {
    if (value === null || value === undefined) continue;
    if (typeof value !== 'object' || Array.isArray(value)) {
      throw new CliError(
        `error parsing ${source}: a document must be an object with apiVersion, kind and metadata`,
      );
    }
    const obj = value as Record<string, unknown>;
    if (obj.kind === 'List' && Array.isArray(obj.items))
      out.push(...(obj.items as Record<string, unknown>[]));
    else out.push(obj);
  }
  return out;
}

/** Checks a raw object against its kind's schema; the canonical object, or an Invalid error with every bad field. */
export function toManifest(raw: Record<string, unknown>, source: string): Manifest {
  const kind = typeof raw.kind === 'string' ? raw.kind : '';
  const name = String((raw.metadata as { name?: unknown } | undefined)?.name ?? '');
  const info = resolveKind(kind);
  if (!kind)
    throw new CliError(`error validating ${source}: kind not set; every object needs apiVersion and kind`);
  if (!info || info.kind !== kind) {
    throw new CliError(`error validating ${source}: no kind "${kind}" is known; kinds: ${knownKinds()}`);
  }
  if (raw.apiVersion !== info.apiVersion) {
    throw new CliError(
      `error validating ${source}: ${kind} "${name}" has apiVersion "${String(raw.apiVersion ?? '')}"; use apiVersion "${info.apiVersion}"`,
    );
  }
  const errors: FieldError[] = [];
  const canonical = checkMessage(info.messageType, raw, '', errors);
  if (errors.length || !canonical) throw invalid(info.kind, name, errors);
  return { source, info, object: canonical as KubeObject };
}

export async function readManifests(io: Io, paths: string[], recursive = false): Promise<Manifest[]> {
  if (!paths.length)
    throw new CliError('must give at least one file with -f (a file, a folder, or - for stdin)');
  const manifests: Manifest[] = [];
  for (const path of paths) {
    const sources =
      path === '-'
        ? [{ source: 'STDIN', text: await readAll(io.stdin) }]
        : filesOf(path, recursive).map((file) => ({ source: file, text: readFileSync(file, 'utf8') }));
    for (const { source, text } of sources) {
      for (const raw of parseDocuments(text, source)) manifests.push(toManifest(raw, source));
    }
  }
  if (!manifests.length) throw new CliError(`no objects found in ${paths.join(', ')}`);
  return manifests;
}

/**
 * The namespace a manifest's object goes to: its own, else the session's. A namespace given
 * with -n that differs from the manifest's is an error, as in kubectl.
 */
export function manifestNamespace(
  m: Manifest,
  sessionNamespace: string,
  explicit: string | undefined,
): string {
  if (!m.info.namespaced) return '';
  const own = m.object.metadata?.namespace;
  if (own && explicit && own !== explicit) {
    throw new CliError(
      `the namespace from the provided object "${own}" does not match the namespace "${explicit}" (${m.source}); pass --namespace=${own} or remove it from the manifest`,
    );
  }
  return own || sessionNamespace;
}

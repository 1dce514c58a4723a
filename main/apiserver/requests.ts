/**
 * Parsing of request parameters into what the registry acts on, each failure a BadRequest
 * that names the parameter and what to send instead. Pure functions.
 */
import { ApiError, echo } from '../../client/api/errors.js';
import { knownKinds, resolveKind, type KindInfo } from '../../client/api/kinds.js';
import {
  parseFieldSelector,
  parseLabelSelector,
  type FieldSelector,
  type LabelSelector,
} from '../../client/api/selectors.js';

export function kindOf(name: string | undefined): KindInfo {
  if (!name) throw new ApiError('BadRequest', `kind is required; one of: ${knownKinds()}`);
  const info = resolveKind(name);
  if (!info)
    throw new ApiError('BadRequest', `unknown kind "${echo(name)}"; this server serves: ${knownKinds()}`);
  return info;
}

/**
 * Selectors are parsed before a list or watch is served, and parsing costs per character: a
 * cap keeps one request's cost small. No real selector comes near it (Kubernetes bounds them
 * only by the length of a URL).
 */
export const MAX_SELECTOR_CHARS = 8 * 1024;

function checkSelectorLength(param: string, s: string): void {
  if (s.length > MAX_SELECTOR_CHARS)
    throw new ApiError(
      'BadRequest',
      `${param} is ${s.length} characters long, over the limit of ${MAX_SELECTOR_CHARS}; select with fewer or shorter terms`,
    );
}

export function labelSelectorOf(s: string | undefined): LabelSelector | undefined {
  if (!s || !s.trim()) return undefined;
  checkSelectorLength('labelSelector', s);
  try {
    return parseLabelSelector(s);
  } catch (err) {
    throw new ApiError(
      'BadRequest',
      `labelSelector "${echo(s, 200)}" is invalid: ${echo((err as Error).message, 300)}`,
    );
  }
}

export function fieldSelectorOf(
  s: string | undefined,
  info: KindInfo,
  supported: string[],
): FieldSelector | undefined {
  if (!s || !s.trim()) return undefined;
  checkSelectorLength('fieldSelector', s);
  let sel: FieldSelector;
  try {
    sel = parseFieldSelector(s);
  } catch (err) {
    throw new ApiError(
      'BadRequest',
      `fieldSelector "${echo(s, 200)}" is invalid: ${echo((err as Error).message, 300)}`,
    );
  }
  for (const f of sel.fields()) {
    if (!supported.includes(f)) {
      throw new ApiError(
        'BadRequest',
        `field label not supported for ${info.plural}: "${echo(f)}"; supported fields: ${supported.join(', ')}`,
      );
    }
  }
  return sel.empty() ? undefined : sel;
}

/** "" → undefined (latest); "0" → 0 (any); a decimal revision → that number. */
export function resourceVersionOf(rv: string | undefined, param = 'resourceVersion'): number | undefined {
  if (rv === undefined || rv === '') return undefined;
  if (!/^\d{1,15}$/.test(rv))
    throw new ApiError(
      'BadRequest',
      `${param} "${echo(rv, 40)}" is invalid: it must be a decimal number as returned by the server`,
    );
  return Number(rv);
}

interface ContinueToken {
  v: 1;
  rv: number;
  /** Last key returned; the next page starts after it. */
  after: string;
}

export function encodeContinue(rv: number, after: string): string {
  return Buffer.from(JSON.stringify({ v: 1, rv, after } satisfies ContinueToken)).toString('base64url');
}

/** A continue token this server did not make (or cannot use); the client must start over. */
export function invalidContinue(): ApiError {
  return new ApiError('BadRequest', 'the continue token is invalid; list again without it');
}

export function decodeContinue(token: string, prefix: string): ContinueToken {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    throw invalidContinue();
  }
  const t = parsed as Partial<ContinueToken> | null;
  // The revision is one a list was served at: a positive whole number. Anything else (0 or a
  // negative number would read as "the current revision" to the store) was not made here.
  const revisionOk = typeof t?.rv === 'number' && Number.isSafeInteger(t.rv) && t.rv > 0;
  if (t?.v !== 1 || !revisionOk || typeof t.after !== 'string' || !t.after.startsWith(prefix))
    throw invalidContinue();
  return t as ContinueToken;
}

export function propagationPolicyOf(p: string | undefined): 'Background' | 'Foreground' | 'Orphan' {
  if (!p) return 'Background';
  if (p === 'Background' || p === 'Foreground' || p === 'Orphan') return p;
  throw new ApiError(
    'BadRequest',
    `propagationPolicy "${echo(p, 40)}" is not supported; use Background, Foreground or Orphan`,
  );
}

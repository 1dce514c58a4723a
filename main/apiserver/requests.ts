/**
 * Parsing of request parameters into what the registry acts on, each failure a BadRequest
 * that names the parameter and what to send instead. Pure functions.
 */
import { ApiError } from '../../client/api/errors.js';
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
  if (!info) throw new ApiError('BadRequest', `unknown kind "${name}"; this server serves: ${knownKinds()}`);
  return info;
}

export function labelSelectorOf(s: string | undefined): LabelSelector | undefined {
  if (!s || !s.trim()) return undefined;
  try {
    return parseLabelSelector(s);
  } catch (err) {
    throw new ApiError('BadRequest', `labelSelector "${s}" is invalid: ${(err as Error).message}`);
  }
}

export function fieldSelectorOf(
  s: string | undefined,
  info: KindInfo,
  supported: string[],
): FieldSelector | undefined {
  if (!s || !s.trim()) return undefined;
  let sel: FieldSelector;
  try {
    sel = parseFieldSelector(s);
  } catch (err) {
    throw new ApiError('BadRequest', `fieldSelector "${s}" is invalid: ${(err as Error).message}`);
  }
  for (const f of sel.fields()) {
    if (!supported.includes(f)) {
      throw new ApiError(
        'BadRequest',
        `field label not supported for ${info.plural}: "${f}"; supported fields: ${supported.join(', ')}`,
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
      `${param} "${rv}" is invalid: it must be a decimal number as returned by the server`,
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

export function decodeContinue(token: string, prefix: string): ContinueToken {
  const bad = () => new ApiError('BadRequest', 'the continue token is invalid; list again without it');
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    throw bad();
  }
  const t = parsed as Partial<ContinueToken>;
  if (t?.v !== 1 || typeof t.rv !== 'number' || typeof t.after !== 'string' || !t.after.startsWith(prefix))
    throw bad();
  return t as ContinueToken;
}

export function propagationPolicyOf(p: string | undefined): 'Background' | 'Foreground' | 'Orphan' {
  if (!p) return 'Background';
  if (p === 'Background' || p === 'Foreground' || p === 'Orphan') return p;
  throw new ApiError(
    'BadRequest',
    `propagationPolicy "${p}" is not supported; use Background, Foreground or Orphan`,
  );
}

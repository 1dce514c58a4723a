/**
 * Label and field selectors with Kubernetes semantics
 * (k8s.io/apimachinery/pkg/labels/selector.go, pkg/fields/selector.go,
 * pkg/apis/meta/v1 LabelSelectorAsSelector).
 *
 * Label selector string syntax (as `kubectl -l`):
 *   <selector>    ::= <requirement> | <requirement> "," <selector>
 *   <requirement> ::= [!] KEY [ <set-based> | <exact-match> | <numeric> ]
 *   <set-based>   ::= ("in" | "notin") "(" VALUE { "," VALUE } ")"
 *   <exact-match> ::= ("=" | "==" | "!=") VALUE
 *   <numeric>     ::= (">" | "<") INTEGER
 * Whitespace between tokens is ignored; the empty string selects everything. KEY must be a
 * qualified name and VALUE a label value (possibly empty: "a=" and "a in ()" mean the empty
 * value).
 */

import {
  type FieldError,
  formatFieldError,
  invalid,
  isQualifiedName,
  isValidLabelValue,
  notSupported,
} from './validation.js';

/** Carries the offending input, the 0-based character position and/or the field path. */
export class SelectorError extends Error {
  readonly input?: string;
  readonly position?: number;
  /** Field path for errors in a selector object, e.g. `matchExpressions[0].values`. */
  readonly field?: string;
  readonly fieldErrors: readonly FieldError[];
  constructor(
    message: string,
    details: { input?: string; position?: number; field?: string; fieldErrors?: readonly FieldError[] } = {},
  ) {
    super(message);
    this.name = 'SelectorError';
    this.input = details.input;
    this.position = details.position;
    this.field = details.field;
    this.fieldErrors = details.fieldErrors ?? [];
  }
}

// =============================================================================================
// Label selectors
// =============================================================================================

/**
 * Operators, spelled as Kubernetes' selection.Operator: "=" and "==" are both equality,
 * "exists" is a bare key, "!" is "!key", "gt"/"lt" are ">" and "<".
 */
export type LabelSelectorOperator = 'in' | 'notin' | '=' | '==' | '!=' | 'exists' | '!' | 'gt' | 'lt';

export interface LabelRequirement {
  readonly key: string;
  readonly operator: LabelSelectorOperator;
  readonly values: readonly string[];
}

const INT64_MIN = -(1n << 63n);
const INT64_MAX = (1n << 63n) - 1n;

/** Go's strconv.ParseInt(s, 10, 64): optional sign, decimal digits, int64 range. */
function parseInt64(s: string): bigint | undefined {
  if (!/^[+-]?[0-9]+$/.test(s)) return undefined;
  const n = BigInt(s);
  return n < INT64_MIN || n > INT64_MAX ? undefined : n;
}

function joinPath(base: string, child: string): string {
  if (!base) return child;
  return child.startsWith('[') ? `${base}${child}` : `${base}.${child}`;
}

/**
 * Kubernetes' NewRequirement: validates the key, the operator and the values, and returns the
 * requirement or the list of problems (field paths under `path`, e.g. "matchExpressions[0]").
 */
export function validateLabelRequirement(
  key: string,
  operator: string,
  values: readonly string[],
  path = '',
): FieldError[] {
  const errs: FieldError[] = [];
  const keyErrs = isQualifiedName(key);
  if (keyErrs.length > 0) errs.push(invalid(joinPath(path, 'key'), key, keyErrs.join('; ')));
  const valuesPath = joinPath(path, 'values');
  switch (operator) {
    case 'in':
    case 'notin':
      if (values.length === 0)
        errs.push(invalid(valuesPath, values, "for 'in', 'notin' operators, values set can't be empty"));
      break;
    case '=':
    case '==':
    case '!=':
      if (values.length !== 1)
        errs.push(invalid(valuesPath, values, 'exact-match compatibility requires one single value'));
      break;
    case 'exists':
    case '!':
      if (values.length !== 0)
        errs.push(invalid(valuesPath, values, 'values set must be empty for exists and does not exist'));
      break;
    case 'gt':
    case 'lt':
      if (values.length !== 1)
        errs.push(invalid(valuesPath, values, "for 'Gt', 'Lt' operators, exactly one value is required"));
      values.forEach((v, i) => {
        if (parseInt64(v) === undefined) {
          errs.push(
            invalid(`${valuesPath}[${i}]`, v, "for 'Gt', 'Lt' operators, the value must be an integer"),
          );
        }
      });
      break;
    default:
      errs.push(
        notSupported(joinPath(path, 'operator'), operator, [
          'in',
          'notin',
          '=',
          '==',
          '!=',
          'gt',
          'lt',
          'exists',
          '!',
        ]),
      );
  }
  values.forEach((v, i) => {
    const msgs = isValidLabelValue(v);
    if (msgs.length > 0) errs.push(invalid(`${valuesPath}[${i}]`, v, msgs.join('; ')));
  });
  return errs;
}

/** Builds a validated requirement; throws SelectorError listing every problem. */
export function newLabelRequirement(
  key: string,
  operator: LabelSelectorOperator,
  values: readonly string[] = [],
  path = '',
): LabelRequirement {
  const errs = validateLabelRequirement(key, operator, values, path);
  if (errs.length > 0) throw fieldErrorsToSelectorError(errs);
  return Object.freeze({ key, operator, values: Object.freeze([...values]) });
}

function fieldErrorsToSelectorError(
  errs: readonly FieldError[],
  extra: { input?: string; position?: number } = {},
): SelectorError {
  const body = errs.map(formatFieldError).join('; ');
  const prefix = extra.input !== undefined ? `invalid label selector ${JSON.stringify(extra.input)}: ` : '';
  const at = extra.position !== undefined ? `at position ${extra.position}: ` : '';
  return new SelectorError(`${prefix}${at}${body}`, {
    ...extra,
    field: errs[0]?.field || undefined,
    fieldErrors: errs,
  });
}

function hasOwn(labels: Record<string, string>, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(labels, key);
}

/** Whether one requirement matches a label set (Requirement.Matches). */
export function requirementMatches(
  r: LabelRequirement,
  labels: Record<string, string> | undefined | null,
): boolean {
  const ls = labels ?? {};
  const has = hasOwn(ls, r.key);
  switch (r.operator) {
    case 'in':
    case '=':
    case '==':
      return has && r.values.includes(ls[r.key]);
    case 'notin':
    case '!=':
      return !has || !r.values.includes(ls[r.key]);
    case 'exists':
      return has;
    case '!':
      return !has;
    case 'gt':
    case 'lt': {
      if (!has || r.values.length !== 1) return false;
      const actual = parseInt64(ls[r.key]);
      const bound = parseInt64(r.values[0]);
      if (actual === undefined || bound === undefined) return false;
      return r.operator === 'gt' ? actual > bound : actual < bound;
    }
    default:
      return false;
  }
}

const operatorText: Record<LabelSelectorOperator, string> = {
  '=': '=',
  '==': '==',
  '!=': '!=',
  in: ' in ',
  notin: ' notin ',
  gt: '>',
  lt: '<',
  exists: '',
  '!': '',
};

/** A requirement in selector syntax: "a=b", "a in (x,y)" (values sorted), "!a", "a>5". */
export function requirementToString(r: LabelRequirement): string {
  if (r.operator === 'exists') return r.key;
  if (r.operator === '!') return `!${r.key}`;
  const values = r.values.length === 1 ? r.values[0] : [...r.values].sort().join(',');
  if (r.operator === 'in' || r.operator === 'notin') return `${r.key}${operatorText[r.operator]}(${values})`;
  return `${r.key}${operatorText[r.operator]}${values}`;
}

function byKey(a: LabelRequirement, b: LabelRequirement): number {
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

/** An immutable label selector: the AND of its requirements (sorted by key). */
export class LabelSelector {
  readonly requirements: readonly LabelRequirement[];
  readonly #nothing: boolean;

  private constructor(requirements: readonly LabelRequirement[], nothing: boolean) {
    this.requirements = Object.freeze([...requirements].sort(byKey));
    this.#nothing = nothing;
  }

  static readonly #everything = new LabelSelector([], false);
  static readonly #nothingSelector = new LabelSelector([], true);

  /** Selects every object (the empty selector). */
  static everything(): LabelSelector {
    return LabelSelector.#everything;
  }

  /** Selects no object (what a missing `selector` object means). */
  static nothing(): LabelSelector {
    return LabelSelector.#nothingSelector;
  }

  /** A selector of already-validated requirements (see newLabelRequirement). */
  static of(requirements: readonly LabelRequirement[]): LabelSelector {
    return requirements.length === 0 ? LabelSelector.#everything : new LabelSelector(requirements, false);
  }

  matches(labels: Record<string, string> | undefined | null): boolean {
    if (this.#nothing) return false;
    return this.requirements.every((r) => requirementMatches(r, labels));
  }

  /** True when the selector does not restrict anything (the "nothing" selector is not empty). */
  empty(): boolean {
    return !this.#nothing && this.requirements.length === 0;
  }

  /** True for the selector that matches nothing. */
  matchesNothing(): boolean {
    return this.#nothing;
  }

  /** A new selector with more requirements (ANDed). Adding to "nothing" still matches nothing. */
  add(...requirements: LabelRequirement[]): LabelSelector {
    if (this.#nothing) return this;
    return LabelSelector.of([...this.requirements, ...requirements]);
  }

  /**
   * If the selector requires `key` to have one specific value ("key=v", "key==v" or
   * "key in (v)"), that value; otherwise undefined. Useful for index lookups.
   */
  requiresExactMatch(key: string): string | undefined {
    const r = this.requirements.find((x) => x.key === key);
    if (!r) return undefined;
    if ((r.operator === '=' || r.operator === '==' || r.operator === 'in') && r.values.length === 1)
      return r.values[0];
    return undefined;
  }

  /**
   * Canonical string form, re-parseable by parseLabelSelector. As in Kubernetes, both
   * "everything" and "nothing" print as "" (which parses back to everything).
   */
  toString(): string {
    return this.requirements.map(requirementToString).join(',');
  }
}

const EVERYTHING = LabelSelector.everything();
const NOTHING = LabelSelector.nothing();

// ---------------------------------------------------------------------------------------------
// Lexer and parser for the string form
// ---------------------------------------------------------------------------------------------

type Tok =
  | 'EOS'
  | 'ClosedPar'
  | 'Comma'
  | 'DoesNotExist'
  | 'DoubleEquals'
  | 'Equals'
  | 'GreaterThan'
  | 'Identifier'
  | 'In'
  | 'LessThan'
  | 'NotEquals'
  | 'NotIn'
  | 'OpenPar';

interface Token {
  tok: Tok;
  lit: string;
  pos: number;
}

const symbolTokens: Record<string, Tok> = {
  ')': 'ClosedPar',
  ',': 'Comma',
  '!': 'DoesNotExist',
  '==': 'DoubleEquals',
  '=': 'Equals',
  '>': 'GreaterThan',
  '<': 'LessThan',
  '!=': 'NotEquals',
  '(': 'OpenPar',
};

function isWhitespace(c: string): boolean {
  return c === ' ' || c === '\t' || c === '\r' || c === '\n';
}

function isSpecialSymbol(c: string): boolean {
  return c === '=' || c === '!' || c === '(' || c === ')' || c === ',' || c === '>' || c === '<';
}

function lex(s: string): Token[] {
  const tokens: Token[] = [];
  let pos = 0;
  for (;;) {
    while (pos < s.length && isWhitespace(s[pos])) pos++;
    const start = pos;
    if (pos >= s.length) {
      tokens.push({ tok: 'EOS', lit: '', pos });
      return tokens;
    }
    if (isSpecialSymbol(s[pos])) {
      // Longest run of symbol characters that still forms a token: "!=" before "!".
      let buf = '';
      let last: Tok | undefined;
      let lastLit = '';
      while (pos < s.length && isSpecialSymbol(s[pos])) {
        buf += s[pos];
        const t = Object.prototype.hasOwnProperty.call(symbolTokens, buf) ? symbolTokens[buf] : undefined;
        if (t === undefined) break;
        last = t;
        lastLit = buf;
        pos++;
      }
      tokens.push({ tok: last as Tok, lit: lastLit, pos: start });
      continue;
    }
    while (pos < s.length && !isSpecialSymbol(s[pos]) && !isWhitespace(s[pos])) pos++;
    const lit = s.slice(start, pos);
    tokens.push({ tok: lit === 'in' ? 'In' : lit === 'notin' ? 'NotIn' : 'Identifier', lit, pos: start });
  }
}

/** In a value position the words "in" and "notin" are ordinary identifiers. */
type Context = 'KeyAndOperator' | 'Values';

class LabelParser {
  private readonly tokens: Token[];
  private i = 0;

  constructor(private readonly input: string) {
    this.tokens = lex(input);
  }

  private look(ctx: Context): Token {
    return this.asContext(this.tokens[this.i], ctx);
  }

  private next(ctx: Context): Token {
    const t = this.tokens[this.i];
    if (this.i < this.tokens.length - 1) this.i++;
    return this.asContext(t, ctx);
  }

  private asContext(t: Token, ctx: Context): Token {
    if (ctx === 'Values' && (t.tok === 'In' || t.tok === 'NotIn')) return { ...t, tok: 'Identifier' };
    return t;
  }

  private fail(t: Token, expected: string): never {
    const found = t.tok === 'EOS' ? 'end of string' : `'${t.lit}'`;
    throw new SelectorError(
      `invalid label selector ${JSON.stringify(this.input)}: at position ${t.pos}: found ${found}, expected: ${expected}`,
      { input: this.input, position: t.pos },
    );
  }

  parse(): LabelRequirement[] {
    const reqs: LabelRequirement[] = [];
    for (;;) {
      const t = this.look('Values');
      if (t.tok === 'EOS') return reqs;
      if (t.tok !== 'Identifier' && t.tok !== 'DoesNotExist')
        this.fail(t, "'!', identifier, or end of string");
      reqs.push(this.parseRequirement());
      const sep = this.next('Values');
      if (sep.tok === 'EOS') return reqs;
      if (sep.tok !== 'Comma') this.fail(sep, "',' or end of string");
      const after = this.look('Values');
      if (after.tok !== 'Identifier' && after.tok !== 'DoesNotExist')
        this.fail(after, "'!' or identifier after ','");
    }
  }

  private parseRequirement(): LabelRequirement {
    let t = this.next('Values');
    const start = t.pos;
    let operator: LabelSelectorOperator | undefined;
    if (t.tok === 'DoesNotExist') {
      operator = '!';
      t = this.next('Values');
    }
    if (t.tok !== 'Identifier') this.fail(t, 'identifier');
    const key = t.lit;
    const keyErrs = isQualifiedName(key);
    if (keyErrs.length > 0) {
      throw fieldErrorsToSelectorError([invalid('', key, keyErrs.join('; '))], {
        input: this.input,
        position: t.pos,
      });
    }
    const after = this.look('Values');
    if (operator === '!') return this.build(key, '!', [], start, new Map());
    if (after.tok === 'EOS' || after.tok === 'Comma') return this.build(key, 'exists', [], start, new Map());

    const opTok = this.next('KeyAndOperator');
    const ops: Partial<Record<Tok, LabelSelectorOperator>> = {
      In: 'in',
      NotIn: 'notin',
      Equals: '=',
      DoubleEquals: '==',
      NotEquals: '!=',
      GreaterThan: 'gt',
      LessThan: 'lt',
    };
    operator = ops[opTok.tok];
    if (!operator) this.fail(opTok, 'one of in, notin, =, ==, !=, >, <');
    const positions = new Map<string, number>();
    const values =
      operator === 'in' || operator === 'notin'
        ? this.parseValues(positions)
        : this.parseExactValue(positions, opTok);
    return this.build(key, operator, values, start, positions);
  }

  private build(
    key: string,
    operator: LabelSelectorOperator,
    values: string[],
    start: number,
    positions: Map<string, number>,
  ): LabelRequirement {
    const errs = validateLabelRequirement(key, operator, values);
    if (errs.length > 0) {
      // Point at the first offending value when we know where it was written.
      const m = /\[(\d+)\]$/.exec(errs[0].field);
      const pos = m ? (positions.get(values[Number(m[1])]) ?? start) : start;
      // Field paths mean nothing in the string form: report the bare problems.
      const bare = errs.map((e) => ({ ...e, field: '' }));
      throw fieldErrorsToSelectorError(bare, { input: this.input, position: pos });
    }
    return Object.freeze({ key, operator, values: Object.freeze(values) });
  }

  /** "(" values ")", deduplicated and sorted like Kubernetes' sets.String. */
  private parseValues(positions: Map<string, number>): string[] {
    const open = this.next('Values');
    if (open.tok !== 'OpenPar') this.fail(open, "'('");
    const set = new Set<string>();
    const add = (v: string, pos: number): void => {
      set.add(v);
      if (!positions.has(v)) positions.set(v, pos);
    };
    const first = this.look('Values');
    if (first.tok === 'ClosedPar') {
      this.next('Values');
      add('', first.pos);
      return [...set].sort();
    }
    if (first.tok !== 'Identifier' && first.tok !== 'Comma') this.fail(first, "',', ')' or identifier");
    for (;;) {
      const t = this.next('Values');
      if (t.tok === 'Identifier') {
        add(t.lit, t.pos);
        const t2 = this.look('Values');
        if (t2.tok === 'Comma') continue;
        if (t2.tok === 'ClosedPar') break;
        this.fail(t2, "',' or ')'");
      } else if (t.tok === 'Comma') {
        // Empty values: "(,a)", "(a,)" and "(a,,b)" all contain "".
        if (set.size === 0) add('', t.pos);
        const t2 = this.look('Values');
        if (t2.tok === 'ClosedPar') {
          add('', t2.pos);
          break;
        }
        if (t2.tok === 'Comma') add('', t2.pos);
      } else {
        this.fail(t, "',' or identifier");
      }
    }
    const close = this.next('Values');
    if (close.tok !== 'ClosedPar') this.fail(close, "')'");
    return [...set].sort();
  }

  /** One value after "=", "==", "!=", ">" or "<"; nothing before "," or the end means "". */
  private parseExactValue(positions: Map<string, number>, opTok: Token): string[] {
    const t = this.look('Values');
    if (t.tok === 'EOS' || t.tok === 'Comma') {
      positions.set('', opTok.pos + opTok.lit.length);
      return [''];
    }
    this.next('Values');
    if (t.tok !== 'Identifier') this.fail(t, 'identifier');
    positions.set(t.lit, t.pos);
    return [t.lit];
  }
}

/**
 * Parses a label selector string ("app=web,tier in (fe,be),!canary"). The empty string (or only
 * whitespace) selects everything. Throws SelectorError naming the position of the problem.
 */
export function parseLabelSelector(s: string): LabelSelector {
  const reqs = new LabelParser(s).parse();
  return LabelSelector.of(reqs);
}

/** True when `s` is a valid label selector string. */
export function isValidLabelSelector(s: string): boolean {
  try {
    parseLabelSelector(s);
    return true;
  } catch {
    return false;
  }
}

/**
 * A selector matching exactly the given labels (SelectorFromSet): "k1=v1,k2=v2". An empty or
 * missing set selects everything. Like Kubernetes, this does not validate keys or values.
 */
export function labelSelectorFromSet(set: Record<string, string> | undefined | null): LabelSelector {
  if (!set) return EVERYTHING;
  const reqs = Object.keys(set).map((k) =>
    Object.freeze({ key: k, operator: '=' as const, values: Object.freeze([set[k]]) }),
  );
  return LabelSelector.of(reqs);
}

/** The JSON shape of metav1.LabelSelector. */
export interface LabelSelectorObject {
  matchLabels?: Record<string, string>;
  matchExpressions?: Array<{ key?: string; operator?: string; values?: string[] }>;
}

const objectOperators: Record<string, LabelSelectorOperator> = {
  In: 'in',
  NotIn: 'notin',
  Exists: 'exists',
  DoesNotExist: '!',
};

/**
 * LabelSelectorAsSelector: a missing (undefined/null) selector selects nothing, an empty one
 * ({}) selects everything. matchLabels become "key=value"; matchExpressions use the operators
 * In and NotIn (at least one value), Exists and DoesNotExist (no values). Every problem is
 * reported in one SelectorError with field paths under `path` (e.g. "spec.selector").
 */
export function labelSelectorFromObject(
  sel: LabelSelectorObject | undefined | null,
  path = '',
): LabelSelector {
  if (sel === undefined || sel === null) return NOTHING;
  const matchLabels = sel.matchLabels ?? {};
  const exprs = sel.matchExpressions ?? [];
  const labelKeys = Object.keys(matchLabels).sort();
  if (labelKeys.length + exprs.length === 0) return EVERYTHING;

  const errs: FieldError[] = [];
  const reqs: LabelRequirement[] = [];
  const labelsPath = joinPath(path, 'matchLabels');
  for (const k of labelKeys) {
    const v = matchLabels[k];
    const keyErrs = isQualifiedName(k);
    if (keyErrs.length > 0) errs.push(invalid(labelsPath, k, keyErrs.join('; ')));
    const valueErrs = typeof v === 'string' ? isValidLabelValue(v) : ['must be a string'];
    if (valueErrs.length > 0) errs.push(invalid(`${labelsPath}[${k}]`, v, valueErrs.join('; ')));
    if (keyErrs.length === 0 && valueErrs.length === 0)
      reqs.push(Object.freeze({ key: k, operator: '=', values: Object.freeze([v]) }));
  }
  exprs.forEach((expr, i) => {
    const exprPath = joinPath(path, `matchExpressions[${i}]`);
    const opName = expr?.operator ?? '';
    const op = Object.prototype.hasOwnProperty.call(objectOperators, opName)
      ? objectOperators[opName]
      : undefined;
    if (!op) {
      errs.push(notSupported(joinPath(exprPath, 'operator'), opName, Object.keys(objectOperators)));
      return;
    }
    const key = expr.key ?? '';
    const values = [...(expr.values ?? [])];
    const reqErrs = validateLabelRequirement(key, op, values, exprPath);
    if (reqErrs.length > 0) errs.push(...reqErrs);
    else reqs.push(Object.freeze({ key, operator: op, values: Object.freeze(values) }));
  });
  if (errs.length > 0) throw fieldErrorsToSelectorError(errs);
  return LabelSelector.of(reqs);
}

// =============================================================================================
// Field selectors
// =============================================================================================

export interface FieldRequirement {
  readonly field: string;
  /** "==" is recorded as "=", as in Kubernetes. */
  readonly operator: '=' | '!=';
  readonly value: string;
}

/** Escapes '\', ',' and '=' in a field selector value (fields.EscapeValue). */
export function escapeFieldValue(s: string): string {
  return s.replace(/[\\,=]/g, (c) => `\\${c}`);
}

/**
 * Reverses escapeFieldValue (fields.UnescapeValue): only "\\", "\," and "\=" are escapes; an
 * unescaped ',' or '=' is an error. `offset` shifts reported positions (for parse errors).
 */
export function unescapeFieldValue(s: string, offset = 0, input?: string): string {
  if (!/[\\,=]/.test(s)) return s;
  let out = '';
  const where = (i: number): string =>
    `invalid field selector${input !== undefined ? ` ${JSON.stringify(input)}` : ''}: at position ${offset + i}: `;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '\\') {
      if (i + 1 >= s.length) {
        throw new SelectorError(
          `${where(i)}invalid escape sequence: a value may not end with '\\' (write '\\\\' for a backslash)`,
          {
            input,
            position: offset + i,
          },
        );
      }
      const d = s[i + 1];
      if (d !== '\\' && d !== ',' && d !== '=') {
        throw new SelectorError(
          `${where(i)}invalid escape sequence: \\${d} (only \\\\, \\, and \\= are escapes)`,
          {
            input,
            position: offset + i,
          },
        );
      }
      out += d;
      i++;
    } else if (c === ',' || c === '=') {
      throw new SelectorError(`${where(i)}unescaped '${c}' in value (write it as '\\${c}')`, {
        input,
        position: offset + i,
      });
    } else {
      out += c;
    }
  }
  return out;
}

/** An immutable field selector: the AND of "field=value" / "field!=value" terms. */
export class FieldSelector {
  readonly requirements: readonly FieldRequirement[];

  constructor(requirements: readonly FieldRequirement[] = []) {
    // Copied field by field: in Node 20's V8 a frozen spread copy gets a hidden class of its
    // own, and a fleet keeps one selector per node's watch.
    this.requirements = Object.freeze(
      requirements.map((r) => Object.freeze({ field: r.field, operator: r.operator, value: r.value })),
    );
  }

  static everything(): FieldSelector {
    return new FieldSelector();
  }

  /**
   * True when every term holds. `get` returns a field's value; a missing field (undefined)
   * counts as "", as with Kubernetes' fields.Set, so "spec.nodeName!=n1" matches an unbound pod.
   */
  matches(get: ((field: string) => string | undefined) | Record<string, string>): boolean {
    const lookup =
      typeof get === 'function'
        ? get
        : (f: string): string | undefined =>
            Object.prototype.hasOwnProperty.call(get, f) ? get[f] : undefined;
    return this.requirements.every((r) => {
      const v = lookup(r.field) ?? '';
      return r.operator === '=' ? v === r.value : v !== r.value;
    });
  }

  empty(): boolean {
    return this.requirements.length === 0;
  }

  /** The distinct field names used, in order of first use. */
  fields(): string[] {
    return [...new Set(this.requirements.map((r) => r.field))];
  }

  /** The value an "=" term requires for `field`, if there is one. */
  requiresExactMatch(field: string): string | undefined {
    return this.requirements.find((r) => r.field === field && r.operator === '=')?.value;
  }

  /** "f1=v1,f2!=v2" with values escaped; re-parseable. */
  toString(): string {
    return this.requirements.map((r) => `${r.field}${r.operator}${escapeFieldValue(r.value)}`).join(',');
  }
}

const fieldOperators = ['!=', '==', '='] as const;

/**
 * Parses a field selector ("metadata.name=web,status.phase!=Running"). Terms are split on
 * unescaped commas and each at its first operator ("!=", "==", "=", tried in that order at each
 * position); values may contain "\,", "\=" and "\\". Like Kubernetes, whitespace is not trimmed
 * and terms are sorted; empty terms are skipped, so "" selects everything. Field names are
 * not checked here: the caller knows which fields a kind supports.
 */
export function parseFieldSelector(s: string): FieldSelector {
  const terms: Array<{ text: string; pos: number }> = [];
  if (s.length > 0) {
    let start = 0;
    let inSlash = false;
    for (let i = 0; i < s.length; i++) {
      const c = s[i];
      if (inSlash) inSlash = false;
      else if (c === '\\') inSlash = true;
      else if (c === ',') {
        terms.push({ text: s.slice(start, i), pos: start });
        start = i + 1;
      }
    }
    terms.push({ text: s.slice(start), pos: start });
  }
  terms.sort((a, b) => (a.text < b.text ? -1 : a.text > b.text ? 1 : 0));

  const reqs: FieldRequirement[] = [];
  for (const term of terms) {
    if (term.text === '') continue;
    let split: { lhs: string; op: (typeof fieldOperators)[number]; rhs: string; at: number } | undefined;
    outer: for (let i = 0; i < term.text.length; i++) {
      for (const op of fieldOperators) {
        if (term.text.startsWith(op, i)) {
          split = { lhs: term.text.slice(0, i), op, rhs: term.text.slice(i + op.length), at: i + op.length };
          break outer;
        }
      }
    }
    if (!split) {
      throw new SelectorError(
        `invalid field selector ${JSON.stringify(s)}: at position ${term.pos}: can't understand ${JSON.stringify(term.text)}, expected: field=value, field==value or field!=value`,
        { input: s, position: term.pos },
      );
    }
    const value = unescapeFieldValue(split.rhs, term.pos + split.at, s);
    reqs.push({ field: split.lhs, operator: split.op === '!=' ? '!=' : '=', value });
  }
  return new FieldSelector(reqs);
}

/** True when `s` is a syntactically valid field selector. */
export function isValidFieldSelector(s: string): boolean {
  try {
    parseFieldSelector(s);
    return true;
  } catch {
    return false;
  }
}

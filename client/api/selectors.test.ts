import { describe, expect, it } from 'vitest';
import {
  FieldSelector,
  LabelSelector,
  SelectorError,
  escapeFieldValue,
  isValidFieldSelector,
  isValidLabelSelector,
  labelSelectorFromObject,
  labelSelectorFromSet,
  newLabelRequirement,
  parseFieldSelector,
  parseLabelSelector,
  requirementMatches,
  requirementToString,
  unescapeFieldValue,
  validateLabelRequirement,
} from './selectors.js';

function thrown(fn: () => unknown): SelectorError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(SelectorError);
    return e as SelectorError;
  }
  throw new Error('expected a SelectorError');
}

describe('parseLabelSelector: valid syntax and canonical form', () => {
  it.each<[string, string]>([
    ['', ''],
    ['   ', ''],
    ['x=a', 'x=a'],
    ['x==a', 'x==a'],
    ['x!=a', 'x!=a'],
    ['x', 'x'],
    ['!x', '!x'],
    ['! x', '!x'],
    ['x>1', 'x>1'],
    ['x<1', 'x<1'],
    ['x>1,z<5', 'x>1,z<5'],
    ['x=a,y!=b', 'x=a,y!=b'],
    ['y!=b,x=a', 'x=a,y!=b'],
    ['x=', 'x='],
    ['x= ', 'x='],
    ['x=,z= ', 'x=,z='],
    ['x in (a)', 'x in (a)'],
    ['x in (b,a)', 'x in (a,b)'],
    ['x in (a,a,b)', 'x in (a,b)'],
    ['x in ( a , b )', 'x in (a,b)'],
    ['x in(a)', 'x in (a)'],
    ['x notin (a)', 'x notin (a)'],
    ['x in ()', 'x in ()'],
    ['x notin ()', 'x notin ()'],
    ['x in (,a)', 'x in (,a)'],
    ['x in (a,)', 'x in (,a)'],
    ['x in (a,,b)', 'x in (,a,b)'],
    ['x in (foo,,baz),y,z notin ()', 'x in (,baz,foo),y,z notin ()'],
    ['  x  in  ( a )  ,  y  ', 'x in (a),y'],
    ['\tx\n=\ra', 'x=a'],
    ['in in (in,notin)', 'in in (in,notin)'],
    ['notin=in', 'notin=in'],
    ['x=in', 'x=in'],
    ['example.com/app=web', 'example.com/app=web'],
    ['a.b_c-d=A.b_C-1', 'a.b_c-d=A.b_C-1'],
    ['b,a', 'a,b'],
    ['x>007', 'x>007'],
  ])('%j → %j', (input, canonical) => {
    const sel = parseLabelSelector(input);
    expect(sel.toString()).toBe(canonical);
    expect(isValidLabelSelector(input)).toBe(true);
    // The canonical form is stable.
    expect(parseLabelSelector(canonical).toString()).toBe(canonical);
  });

  it('exposes sorted requirements with Kubernetes operators', () => {
    const sel = parseLabelSelector('z notin (b,a), !y, x, w>3, v==1, u!=2, t in (q)');
    expect(sel.requirements).toEqual([
      { key: 't', operator: 'in', values: ['q'] },
      { key: 'u', operator: '!=', values: ['2'] },
      { key: 'v', operator: '==', values: ['1'] },
      { key: 'w', operator: 'gt', values: ['3'] },
      { key: 'x', operator: 'exists', values: [] },
      { key: 'y', operator: '!', values: [] },
      { key: 'z', operator: 'notin', values: ['a', 'b'] },
    ]);
    expect(Object.isFrozen(sel.requirements)).toBe(true);
  });

  it('empty() is true only for the selector that restricts nothing', () => {
    expect(parseLabelSelector('').empty()).toBe(true);
    expect(parseLabelSelector('a').empty()).toBe(false);
    expect(LabelSelector.everything().empty()).toBe(true);
    expect(LabelSelector.nothing().empty()).toBe(false);
  });
});

describe('parseLabelSelector: errors name the position and what was expected', () => {
  it.each<[string, number, string]>([
    [',', 0, "found ',', expected: '!', identifier, or end of string"],
    ['=a', 0, "found '=', expected: '!', identifier, or end of string"],
    ['(', 0, "found '(', expected: '!', identifier, or end of string"],
    ['x,', 2, "found end of string, expected: '!' or identifier after ','"],
    ['x,,y', 2, "found ',', expected: '!' or identifier after ','"],
    ['x y', 2, "found 'y', expected: one of in, notin, =, ==, !=, >, <"],
    ['x=a b', 4, "found 'b', expected: ',' or end of string"],
    ['x=a=b', 3, "found '=', expected: ',' or end of string"],
    ['x==a==b', 4, "found '==', expected: ',' or end of string"],
    ['x=a,y=b c', 8, "found 'c', expected: ',' or end of string"],
    ['x=(a)', 2, "found '(', expected: identifier"],
    ['x in a', 5, "found 'a', expected: '('"],
    ['x in', 4, "found end of string, expected: '('"],
    ['x in (', 6, "found end of string, expected: ',', ')' or identifier"],
    ['x in (a', 7, "found end of string, expected: ',' or ')'"],
    ['x in (a b)', 8, "found 'b', expected: ',' or ')'"],
    ['x in (a,', 8, "found end of string, expected: ',' or identifier"],
    ['x in (a,=)', 8, "found '=', expected: ',' or identifier"],
    ['x in ((a))', 6, "found '(', expected: ',', ')' or identifier"],
    ['!', 1, 'found end of string, expected: identifier'],
    ['!!x', 1, "found '!', expected: identifier"],
    ['!x=a', 2, "found '=', expected: ',' or end of string"],
    ['!x in (a)', 3, "found 'in', expected: ',' or end of string"],
    ['x!', 1, "found '!', expected: one of in, notin, =, ==, !=, >, <"],
    ['x=>a', 2, "found '>', expected: identifier"],
  ])('%j fails at %d', (input, position, detail) => {
    const err = thrown(() => parseLabelSelector(input));
    expect(err.message).toBe(
      `invalid label selector ${JSON.stringify(input)}: at position ${position}: ${detail}`,
    );
    expect(err.position).toBe(position);
    expect(err.input).toBe(input);
    expect(isValidLabelSelector(input)).toBe(false);
  });

  it.each<[string, number, RegExp]>([
    ['Foo Bar=x', 4, /found 'Bar'/],
    ['a/b/c=x', 0, /Invalid value: "a\/b\/c": a qualified name must consist/],
    ['-a=x', 0, /Invalid value: "-a": name part must consist/],
    [`${'k'.repeat(64)}=x`, 0, /name part must be no more than 63 characters/],
    ['x=a/b', 2, /Invalid value: "a\/b": a valid label must be an empty string/],
    ['x=-a', 2, /Invalid value: "-a": a valid label must be/],
    [`x=${'v'.repeat(64)}`, 2, /must be no more than 63 characters/],
    ['x in (ok,b@d)', 9, /Invalid value: "b@d"/],
    ['x>a', 2, /Invalid value: "a": for 'Gt', 'Lt' operators, the value must be an integer/],
    ['x>', 2, /Invalid value: "": for 'Gt', 'Lt' operators, the value must be an integer/],
    ['x>-1', 2, /Invalid value: "-1": a valid label must be/],
    ['x<99999999999999999999', 2, /the value must be an integer/],
    ['ok=1,x=%', 7, /Invalid value: "%"/],
    ['x=a||y=b', 2, /Invalid value: "a\|\|y": a valid label must be/],
  ])('%j fails validation at %d', (input, position, pattern) => {
    const err = thrown(() => parseLabelSelector(input));
    expect(err.message).toMatch(pattern);
    expect(
      err.message.startsWith(`invalid label selector ${JSON.stringify(input)}: at position ${position}: `),
    ).toBe(true);
    expect(err.position).toBe(position);
  });
});

describe('LabelSelector.matches', () => {
  const labels = { app: 'web', tier: 'frontend', version: '10', empty: '', neg: '-5' };
  it.each<[string, Record<string, string> | undefined, boolean]>([
    ['', labels, true],
    ['', undefined, true],
    ['app=web', labels, true],
    ['app==web', labels, true],
    ['app=db', labels, false],
    ['app!=db', labels, true],
    ['app!=web', labels, false],
    ['missing!=x', labels, true],
    ['missing=x', labels, false],
    ['missing=', labels, false],
    ['empty=', labels, true],
    ['empty', labels, true],
    ['missing', labels, false],
    ['!missing', labels, true],
    ['!app', labels, false],
    ['app in (web,db)', labels, true],
    ['app in (db)', labels, false],
    ['missing in (a)', labels, false],
    ['app notin (db)', labels, true],
    ['app notin (web)', labels, false],
    ['missing notin (a)', labels, true],
    ['empty in ()', labels, true],
    ['version>9', labels, true],
    ['version>10', labels, false],
    ['version<11', labels, true],
    ['version<10', labels, false],
    ['app>1', labels, false],
    ['missing<100', labels, false],
    ['neg<0', labels, true],
    ['app=web,tier=frontend', labels, true],
    ['app=web,tier=backend', labels, false],
    ['app=web,!canary,tier in (frontend,backend),version>2', labels, true],
    ['app', undefined, false],
    ['!app', undefined, true],
    ['app notin (web)', {}, true],
    ['constructor', {}, false],
    ['!toString', {}, true],
  ])('%j on %j → %s', (selector, ls, want) => {
    expect(parseLabelSelector(selector).matches(ls)).toBe(want);
  });

  it('nothing matches nothing, even after add()', () => {
    const n = LabelSelector.nothing();
    expect(n.matches({})).toBe(false);
    expect(n.matches({ a: 'b' })).toBe(false);
    expect(n.matchesNothing()).toBe(true);
    expect(n.add(newLabelRequirement('a', 'exists')).matches({ a: 'b' })).toBe(false);
    expect(n.toString()).toBe('');
  });

  it('add() ANDs and keeps keys sorted', () => {
    const s = parseLabelSelector('b=1').add(newLabelRequirement('a', 'in', ['x', 'y']));
    expect(s.toString()).toBe('a in (x,y),b=1');
    expect(s.matches({ a: 'x', b: '1' })).toBe(true);
    expect(s.matches({ a: 'z', b: '1' })).toBe(false);
  });

  it('requiresExactMatch', () => {
    expect(parseLabelSelector('a=1,b in (2),c in (3,4),d!=5').requiresExactMatch('a')).toBe('1');
    expect(parseLabelSelector('a==1').requiresExactMatch('a')).toBe('1');
    expect(parseLabelSelector('b in (2)').requiresExactMatch('b')).toBe('2');
    expect(parseLabelSelector('c in (3,4)').requiresExactMatch('c')).toBeUndefined();
    expect(parseLabelSelector('d!=5').requiresExactMatch('d')).toBeUndefined();
    expect(parseLabelSelector('a=1').requiresExactMatch('zz')).toBeUndefined();
  });
});

describe('requirements', () => {
  it.each<[string, string, string[], string[]]>([
    ['a', 'in', [], ["values: Invalid value: []: for 'in', 'notin' operators, values set can't be empty"]],
    ['a', 'notin', [], ["values: Invalid value: []: for 'in', 'notin' operators, values set can't be empty"]],
    ['a', '=', [], ['values: Invalid value: []: exact-match compatibility requires one single value']],
    [
      'a',
      '!=',
      ['x', 'y'],
      ['values: Invalid value: ["x","y"]: exact-match compatibility requires one single value'],
    ],
    [
      'a',
      'exists',
      ['x'],
      ['values: Invalid value: ["x"]: values set must be empty for exists and does not exist'],
    ],
    [
      'a',
      '!',
      ['x'],
      ['values: Invalid value: ["x"]: values set must be empty for exists and does not exist'],
    ],
    [
      'a',
      'gt',
      ['1', '2'],
      ['values: Invalid value: ["1","2"]: for \'Gt\', \'Lt\' operators, exactly one value is required'],
    ],
    [
      'a',
      'lt',
      ['x'],
      ["values[0]: Invalid value: \"x\": for 'Gt', 'Lt' operators, the value must be an integer"],
    ],
    [
      'a',
      'bogus',
      [],
      [
        'operator: Unsupported value: "bogus": supported values: "in", "notin", "=", "==", "!=", "gt", "lt", "exists", "!"',
      ],
    ],
    ['a', 'in', ['x', 'y'], []],
    ['a', 'lt', ['9223372036854775807'], []],
    [
      'a',
      'lt',
      ['9223372036854775808'],
      [
        "values[0]: Invalid value: \"9223372036854775808\": for 'Gt', 'Lt' operators, the value must be an integer",
      ],
    ],
  ])('validateLabelRequirement(%j, %j, %j)', (key, op, values, want) => {
    const errs = validateLabelRequirement(key, op, values);
    expect(
      errs.map(
        (e) =>
          `${e.field}: ${e.type === 'FieldValueNotSupported' ? 'Unsupported value' : 'Invalid value'}: ${JSON.stringify(e.value)}: ${e.message}`,
      ),
    ).toEqual(want);
  });

  it('newLabelRequirement throws every problem at once', () => {
    const err = thrown(() => newLabelRequirement('bad key', 'in', [], 'spec.selector'));
    expect(err.fieldErrors.map((e) => e.field)).toEqual(['spec.selector.key', 'spec.selector.values']);
    expect(err.field).toBe('spec.selector.key');
  });

  it('matches and prints single requirements', () => {
    const r = newLabelRequirement('a', 'notin', ['z', 'x']);
    expect(requirementToString(r)).toBe('a notin (x,z)');
    expect(r.values).toEqual(['z', 'x']);
    expect(requirementMatches(r, { a: 'y' })).toBe(true);
    expect(requirementMatches(r, { a: 'x' })).toBe(false);
    expect(requirementMatches(r, undefined)).toBe(true);
  });
});

describe('labelSelectorFromSet', () => {
  it('selects exactly the set', () => {
    const s = labelSelectorFromSet({ b: '2', a: '1' });
    expect(s.toString()).toBe('a=1,b=2');
    expect(s.matches({ a: '1', b: '2', c: '3' })).toBe(true);
    expect(s.matches({ a: '1' })).toBe(false);
    expect(labelSelectorFromSet({}).empty()).toBe(true);
    expect(labelSelectorFromSet(undefined).empty()).toBe(true);
  });
});

describe('labelSelectorFromObject', () => {
  it('undefined and null select nothing; {} selects everything', () => {
    expect(labelSelectorFromObject(undefined).matches({})).toBe(false);
    expect(labelSelectorFromObject(null).matches({ a: 'b' })).toBe(false);
    expect(labelSelectorFromObject(undefined).empty()).toBe(false);
    expect(labelSelectorFromObject({}).matches({})).toBe(true);
    expect(labelSelectorFromObject({}).empty()).toBe(true);
    expect(labelSelectorFromObject({ matchLabels: {}, matchExpressions: [] }).matches({ x: 'y' })).toBe(true);
  });

  it.each<[Parameters<typeof labelSelectorFromObject>[0], string]>([
    [{ matchLabels: { app: 'web' } }, 'app=web'],
    [{ matchLabels: { b: '2', a: '1' } }, 'a=1,b=2'],
    [{ matchExpressions: [{ key: 'tier', operator: 'In', values: ['fe', 'be'] }] }, 'tier in (be,fe)'],
    [{ matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['x'] }] }, 'tier notin (x)'],
    [{ matchExpressions: [{ key: 'gpu', operator: 'Exists' }] }, 'gpu'],
    [{ matchExpressions: [{ key: 'gpu', operator: 'DoesNotExist', values: [] }] }, '!gpu'],
    [{ matchLabels: { z: '1' }, matchExpressions: [{ key: 'a', operator: 'Exists' }] }, 'a,z=1'],
    [{ matchExpressions: [{ key: 'a', operator: 'In', values: [''] }] }, 'a in ()'],
  ])('%j → %j', (obj, text) => {
    const sel = labelSelectorFromObject(obj);
    expect(sel.toString()).toBe(text);
    // Same meaning as the parsed string form.
    const parsed = parseLabelSelector(text);
    const samples: Array<Record<string, string>> = [
      {},
      { app: 'web' },
      { tier: 'fe' },
      { tier: 'x' },
      { gpu: '' },
      { a: '', z: '1' },
      { a: 'q', z: '1' },
    ];
    for (const ls of samples) {
      expect(sel.matches(ls)).toBe(parsed.matches(ls));
    }
  });

  it('matches like Kubernetes', () => {
    const sel = labelSelectorFromObject({
      matchLabels: { app: 'web' },
      matchExpressions: [
        { key: 'tier', operator: 'In', values: ['fe', 'be'] },
        { key: 'canary', operator: 'DoesNotExist' },
      ],
    });
    expect(sel.matches({ app: 'web', tier: 'fe' })).toBe(true);
    expect(sel.matches({ app: 'web', tier: 'db' })).toBe(false);
    expect(sel.matches({ app: 'web', tier: 'fe', canary: 'true' })).toBe(false);
    expect(sel.matches({ tier: 'fe' })).toBe(false);
  });

  it.each<[Parameters<typeof labelSelectorFromObject>[0], string[]]>([
    [
      { matchExpressions: [{ key: 'a', operator: 'In', values: [] }] },
      [
        "spec.selector.matchExpressions[0].values: Invalid value: []: for 'in', 'notin' operators, values set can't be empty",
      ],
    ],
    [
      { matchExpressions: [{ key: 'a', operator: 'NotIn' }] },
      [
        "spec.selector.matchExpressions[0].values: Invalid value: []: for 'in', 'notin' operators, values set can't be empty",
      ],
    ],
    [
      {
        matchExpressions: [
          { key: 'a', operator: 'Exists' },
          { key: 'b', operator: 'Exists', values: ['x'] },
        ],
      },
      [
        'spec.selector.matchExpressions[1].values: Invalid value: ["x"]: values set must be empty for exists and does not exist',
      ],
    ],
    [
      { matchExpressions: [{ key: 'a', operator: 'DoesNotExist', values: ['x'] }] },
      [
        'spec.selector.matchExpressions[0].values: Invalid value: ["x"]: values set must be empty for exists and does not exist',
      ],
    ],
    [
      { matchExpressions: [{ key: 'a', operator: 'in', values: ['x'] }] },
      [
        'spec.selector.matchExpressions[0].operator: Unsupported value: "in": supported values: "In", "NotIn", "Exists", "DoesNotExist"',
      ],
    ],
    [
      { matchExpressions: [{ key: 'a' }] },
      [
        'spec.selector.matchExpressions[0].operator: Unsupported value: "": supported values: "In", "NotIn", "Exists", "DoesNotExist"',
      ],
    ],
    [
      { matchExpressions: [{ operator: 'Exists' }] },
      ['spec.selector.matchExpressions[0].key: Invalid value: ""'],
    ],
    [
      { matchExpressions: [{ key: 'a', operator: 'In', values: ['ok', 'not ok'] }] },
      ['spec.selector.matchExpressions[0].values[1]: Invalid value: "not ok": a valid label must be'],
    ],
    [
      { matchLabels: { 'bad key': 'v' } },
      ['spec.selector.matchLabels: Invalid value: "bad key": name part must consist'],
    ],
    [
      { matchLabels: { k: 'bad value' } },
      ['spec.selector.matchLabels[k]: Invalid value: "bad value": a valid label must be'],
    ],
  ])('rejects %j', (obj, prefixes) => {
    const err = thrown(() => labelSelectorFromObject(obj, 'spec.selector'));
    const lines = err.message.split('; spec.');
    expect(lines).toHaveLength(prefixes.length);
    prefixes.forEach((p, i) => expect((i === 0 ? '' : 'spec.') + lines[i]).toContain(p));
    expect(err.field).toBe(err.fieldErrors[0].field);
    expect(err.fieldErrors).toHaveLength(prefixes.length);
  });

  it('reports every problem, without a path prefix by default', () => {
    const err = thrown(() =>
      labelSelectorFromObject({
        matchLabels: { 'a/b/c': 'x' },
        matchExpressions: [
          { key: 'a', operator: 'In', values: [] },
          { key: 'b', operator: 'Foo' },
        ],
      }),
    );
    expect(err.fieldErrors.map((e) => e.field)).toEqual([
      'matchLabels',
      'matchExpressions[0].values',
      'matchExpressions[1].operator',
    ]);
    expect(err.field).toBe('matchLabels');
  });

  it('does not share the caller’s values array', () => {
    const values = ['a'];
    const sel = labelSelectorFromObject({ matchExpressions: [{ key: 'k', operator: 'In', values }] });
    values.push('b');
    expect(sel.matches({ k: 'b' })).toBe(false);
  });
});

describe('parseFieldSelector', () => {
  it.each<[string, Array<{ field: string; operator: '=' | '!='; value: string }>, string]>([
    ['', [], ''],
    [',', [], ''],
    ['metadata.name=web', [{ field: 'metadata.name', operator: '=', value: 'web' }], 'metadata.name=web'],
    ['metadata.name==web', [{ field: 'metadata.name', operator: '=', value: 'web' }], 'metadata.name=web'],
    [
      'status.phase!=Running',
      [{ field: 'status.phase', operator: '!=', value: 'Running' }],
      'status.phase!=Running',
    ],
    ['spec.nodeName=', [{ field: 'spec.nodeName', operator: '=', value: '' }], 'spec.nodeName='],
    ['spec.nodeName!=', [{ field: 'spec.nodeName', operator: '!=', value: '' }], 'spec.nodeName!='],
    [
      'status.phase!=Running,metadata.name=web',
      [
        { field: 'metadata.name', operator: '=', value: 'web' },
        { field: 'status.phase', operator: '!=', value: 'Running' },
      ],
      'metadata.name=web,status.phase!=Running',
    ],
    [
      'a=b,,c=d',
      [
        { field: 'a', operator: '=', value: 'b' },
        { field: 'c', operator: '=', value: 'd' },
      ],
      'a=b,c=d',
    ],
    ['a=x\\,y', [{ field: 'a', operator: '=', value: 'x,y' }], 'a=x\\,y'],
    ['a=x\\=y', [{ field: 'a', operator: '=', value: 'x=y' }], 'a=x\\=y'],
    ['a=x\\\\y', [{ field: 'a', operator: '=', value: 'x\\y' }], 'a=x\\\\y'],
    ['a=\\,\\=\\\\', [{ field: 'a', operator: '=', value: ',=\\' }], 'a=\\,\\=\\\\'],
    ['a!b=c', [{ field: 'a!b', operator: '=', value: 'c' }], 'a!b=c'],
    [' a = b ', [{ field: ' a ', operator: '=', value: ' b ' }], ' a = b '],
    ['=x', [{ field: '', operator: '=', value: 'x' }], '=x'],
    ['a=héllo wörld', [{ field: 'a', operator: '=', value: 'héllo wörld' }], 'a=héllo wörld'],
  ])('%j', (input, reqs, canonical) => {
    const sel = parseFieldSelector(input);
    expect(sel.requirements).toEqual(reqs);
    expect(sel.toString()).toBe(canonical);
    expect(sel.empty()).toBe(reqs.length === 0);
    expect(isValidFieldSelector(input)).toBe(true);
    expect(parseFieldSelector(canonical).requirements).toEqual(reqs);
  });

  it.each<[string, number, string]>([
    ['foo', 0, 'can\'t understand "foo", expected: field=value, field==value or field!=value'],
    ['a=b,foo', 4, 'can\'t understand "foo", expected: field=value, field==value or field!=value'],
    ['a=b=c', 3, "unescaped '=' in value (write it as '\\=')"],
    ['a==b=c', 4, "unescaped '=' in value (write it as '\\=')"],
    ['a=b\\', 3, "invalid escape sequence: a value may not end with '\\' (write '\\\\' for a backslash)"],
    ['a=b\\x', 3, 'invalid escape sequence: \\x (only \\\\, \\, and \\= are escapes)'],
    ['z=1,a=b\\n', 7, 'invalid escape sequence: \\n (only \\\\, \\, and \\= are escapes)'],
  ])('rejects %j at %d', (input, position, detail) => {
    const err = thrown(() => parseFieldSelector(input));
    expect(err.message).toBe(
      `invalid field selector ${JSON.stringify(input)}: at position ${position}: ${detail}`,
    );
    expect(err.position).toBe(position);
    expect(isValidFieldSelector(input)).toBe(false);
  });

  it('matches with a getter; a missing field counts as ""', () => {
    const pod: Record<string, string> = {
      'metadata.name': 'web-1',
      'metadata.namespace': 'default',
      'status.phase': 'Pending',
    };
    const get = (f: string): string | undefined => pod[f];
    expect(parseFieldSelector('').matches(get)).toBe(true);
    expect(parseFieldSelector('metadata.name=web-1').matches(get)).toBe(true);
    expect(parseFieldSelector('metadata.name=web-2').matches(get)).toBe(false);
    expect(parseFieldSelector('status.phase!=Running').matches(get)).toBe(true);
    expect(parseFieldSelector('status.phase!=Pending').matches(get)).toBe(false);
    expect(parseFieldSelector('spec.nodeName=').matches(get)).toBe(true);
    expect(parseFieldSelector('spec.nodeName!=').matches(get)).toBe(false);
    expect(parseFieldSelector('spec.nodeName!=node-1').matches(get)).toBe(true);
    expect(parseFieldSelector('metadata.name=web-1,metadata.namespace=kube-system').matches(get)).toBe(false);
    expect(parseFieldSelector('metadata.name=web-1').matches(pod)).toBe(true);
    expect(parseFieldSelector('constructor=').matches({})).toBe(true);
  });

  it('fields(), requiresExactMatch() and everything()', () => {
    const sel = parseFieldSelector('status.phase!=Failed,metadata.name=a,status.phase!=Succeeded');
    expect(sel.fields()).toEqual(['metadata.name', 'status.phase']);
    expect(sel.requiresExactMatch('metadata.name')).toBe('a');
    expect(sel.requiresExactMatch('status.phase')).toBeUndefined();
    expect(FieldSelector.everything().empty()).toBe(true);
    expect(FieldSelector.everything().fields()).toEqual([]);
    expect(new FieldSelector([{ field: 'a', operator: '!=', value: 'x,y' }]).toString()).toBe('a!=x\\,y');
  });

  it('escapes and unescapes values', () => {
    for (const v of ['', 'plain', 'a,b', 'a=b', 'a\\b', '\\,=\\\\', 'ünï,cöde']) {
      expect(unescapeFieldValue(escapeFieldValue(v))).toBe(v);
    }
    expect(escapeFieldValue('a\\b,c=d')).toBe('a\\\\b\\,c\\=d');
    expect(() => unescapeFieldValue('a,b')).toThrow(SelectorError);
  });
});

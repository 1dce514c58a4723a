import { describe, expect, it } from 'vitest';
import { limitsWith, refusal } from '../../test/support/refusal.js';
import { parseJson } from './json.js';
import { ParseLimitError, SyntaxParseError } from './limits.js';

describe('parseJson', () => {
  it('parses what JSON.parse parses, strings with brackets, quotes and escapes included', () => {
    const doc = { a: 'x"y\\', b: [1, -2.5e3, true, false, null, { c: ']}[{,:' }], d: '\\"' };
    expect(parseJson(JSON.stringify(doc))).toEqual(doc);
    expect(parseJson('  [ ]  ')).toEqual([]);
  });

  it('accepts the deepest nesting allowed and refuses one level more, naming where', () => {
    const nested = (n: number) => '{"a":'.repeat(n) + '1' + '}'.repeat(n);
    expect(parseJson(nested(3), limitsWith({ maxDepth: 3 }))).toEqual({ a: { a: { a: 1 } } });
    const err = refusal(() => parseJson(nested(4), limitsWith({ maxDepth: 3 })));
    expect(err).toBeInstanceOf(ParseLimitError);
    expect(err.message).toMatch(/more than 3 levels deep \(at a\.a\.a\)/);
  });

  it('refuses a million levels in one pass over the text, with a short message', () => {
    const text = '['.repeat(1_000_000) + ']'.repeat(1_000_000);
    const err = refusal(() => parseJson(text));
    expect((err as ParseLimitError).limit).toBe('depth');
    expect(err.message.length).toBeLessThan(300);
  });

  it('counts values: items, objects and scalars', () => {
    expect(parseJson('[1,"a",{"b":null}]', limitsWith({ maxValues: 5 }))).toHaveLength(3);
    expect(
      (refusal(() => parseJson('[1,"a",{"b":null},2]', limitsWith({ maxValues: 5 }))) as ParseLimitError)
        .limit,
    ).toBe('values');
  });

  it('refuses long keys, __proto__ keys (even escaped) and, when asked, duplicate keys', () => {
    expect(
      (
        refusal(() =>
          parseJson(`{"${'k'.repeat(11)}":1}`, limitsWith({ maxKeyLength: 10 })),
        ) as ParseLimitError
      ).limit,
    ).toBe('keyLength');
    expect(refusal(() => parseJson('{"a":{"__proto__":{}}}')).message).toMatch(
      /"__proto__" in a is not allowed/,
    );
    expect(refusal(() => parseJson('{"\\u005f_proto__":1}')).message).toMatch(/__proto__/);
    expect(parseJson('{"a":1,"a":2}')).toEqual({ a: 2 });
    const dup = refusal(() => parseJson('{"m":{"a":1,"a":2}}', undefined, { rejectDuplicateKeys: true }));
    expect(dup).toBeInstanceOf(SyntaxParseError);
    expect(dup.message).toMatch(/names the key "a" twice \(at m\.a\)/);
  });

  it('refuses text over the byte limit, counting UTF-8 bytes', () => {
    const err = refusal(() => parseJson(`"${'é'.repeat(600)}"`, limitsWith({ maxBytes: 1000 })));
    expect((err as ParseLimitError).tooLarge).toBe(true);
    expect(err.message).toMatch(/1202 bytes, over the limit of 1000/);
  });

  it('reports syntax errors briefly, whatever the input', () => {
    const err = refusal(() => parseJson('{"a": tru' + 'e'.repeat(100_000), undefined, { what: 'the patch' }));
    expect(err).toBeInstanceOf(SyntaxParseError);
    expect(err.message).toMatch(/^the patch is not valid JSON: /);
    expect(err.message.length).toBeLessThan(300);
  });
});

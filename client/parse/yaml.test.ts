import { describe, expect, it } from 'vitest';
import { limitOf, limitsWith, refusal } from '../../test/support/refusal.js';
import { ParseLimitError, SyntaxParseError } from './limits.js';
import { parseYaml, parseYamlYielding } from './yaml.js';

describe('parseYaml', () => {
  it('reads a stream of documents, aliases included', () => {
    expect(parseYaml('a: &x [1, 2]\nb: *x\n---\n---\nc: {d: e}\n')).toEqual([
      { a: [1, 2], b: [1, 2] },
      null,
      { c: { d: 'e' } },
    ]);
  });

  it('refuses nesting beyond the limit in flow and in block style, saying where', () => {
    expect(parseYaml('['.repeat(5) + ']'.repeat(5), limitsWith({ maxDepth: 5 }))).toHaveLength(1);
    const flow = refusal(() => parseYaml('['.repeat(6) + ']'.repeat(6), limitsWith({ maxDepth: 5 })));
    expect(flow.message).toMatch(/more than 5 levels deep \(at line 1, column \d+\)/);
    expect(limitOf(() => parseYaml('- '.repeat(6) + 'x\n', limitsWith({ maxDepth: 5 })))).toBe('depth');
    let block = '';
    for (let i = 0; i < 6; i++) block += `${' '.repeat(i)}k:\n`;
    expect(limitOf(() => parseYaml(`${block}${' '.repeat(6)}x\n`, limitsWith({ maxDepth: 5 })))).toBe(
      'depth',
    );
    // Deep enough to overflow JavaScript's stack if it were composed.
    expect(limitOf(() => parseYaml('['.repeat(100_000) + ']'.repeat(100_000)))).toBe('depth');
  });

  it('stops an item bomb at the token limit, long before its end', () => {
    const bomb = '[' + '1,'.repeat(1_500_000) + '1]';
    const err = refusal(() => parseYaml(bomb));
    expect((err as ParseLimitError).limit).toBe('yamlTokens');
    expect(err.message).toMatch(/more than 50000 YAML tokens \(stopped at line 1, column \d+\)/);
  });

  it('refuses alias bombs, by count and by what they expand to', () => {
    let laughs = 'a: &a [x, x, x, x, x, x, x, x, x]\n';
    for (const [name, prev] of [
      ['b', 'a'],
      ['c', 'b'],
      ['d', 'c'],
      ['e', 'd'],
    ])
      laughs += `${name}: &${name} [${Array(9).fill(`*${prev}`).join(', ')}]\n`;
    expect(limitOf(() => parseYaml(laughs))).toBe('aliases');
    const many = 'v: &v 1\nl: [' + Array(101).fill('*v').join(', ') + ']\n';
    expect(refusal(() => parseYaml(many)).message).toMatch(/more than 100 aliases/);
  });

  it('refuses more documents than the limit', () => {
    expect(limitOf(() => parseYaml('a: 1\n---\nb: 2\n---\nc: 3\n', limitsWith({ maxDocuments: 2 })))).toBe(
      'documents',
    );
  });

  it('refuses duplicate keys and __proto__ keys; mappings of many keys stay fast to check', () => {
    const dup = refusal(() => parseYaml('a: 1\nb: 2\na: 3\n'));
    expect(dup).toBeInstanceOf(SyntaxParseError);
    expect(dup.message).toMatch(/names the key "a" twice \(at line 3, column 1\)/);
    expect(limitOf(() => parseYaml('m:\n  __proto__: {x: 1}\n'))).toBe('forbiddenKey');
    // Checked pair by pair (the library's way) this takes a third of a second, 20,000 keys seconds.
    const keys = Array.from({ length: 5_000 }, (_, i) => `k${i}: v`).join('\n');
    expect(Object.keys(parseYaml(keys)[0] as object)).toHaveLength(5_000);
  });

  it('gives syntax errors with line and column and no echo of the text', () => {
    const err = refusal(() =>
      parseYaml('a: [1, 2\nb: c: d\n' + 'x'.repeat(100_000), undefined, { what: 'the manifest' }),
    );
    expect(err).toBeInstanceOf(SyntaxParseError);
    expect(err.message).toMatch(/^the manifest is not valid YAML at line 2, column 1: /);
    expect(err.message.length).toBeLessThan(400);
  });

  it('pauses between slices when asked, with the same result', async () => {
    let pauses = 0;
    const text = Array.from({ length: 3000 }, (_, i) => `- item ${i}`).join('\n');
    const docs = await parseYamlYielding(text, async () => void pauses++);
    expect(docs).toEqual(parseYaml(text));
    expect(pauses).toBeGreaterThan(2);
  });
});

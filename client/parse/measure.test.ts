import { describe, expect, it } from 'vitest';
import { limitOf, limitsWith } from '../../test/support/refusal.js';
import { DEFAULT_PARSE_LIMITS } from './limits.js';
import { checkValueLimits } from './measure.js';

describe('checkValueLimits', () => {
  it('passes a value within the limits', () => {
    expect(
      limitOf(() => checkValueLimits({ a: [1, { b: 'c' }] }, limitsWith({ maxDepth: 3, maxValues: 5 }))),
    ).toBe(undefined);
  });

  it('refuses depth without recursing, even a value deep enough to overflow the stack', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 200_000; i++) deep = [deep];
    expect(limitOf(() => checkValueLimits(deep, DEFAULT_PARSE_LIMITS))).toBe('depth');
  });

  it('counts shared references each time they appear, and ends on a cycle', () => {
    const shared = Array(10).fill(0);
    expect(limitOf(() => checkValueLimits(Array(10).fill(shared), limitsWith({ maxValues: 100 })))).toBe(
      'values',
    );
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(['depth', 'values']).toContain(limitOf(() => checkValueLimits(cycle, DEFAULT_PARSE_LIMITS)));
  });

  it('refuses a huge list before walking it, long keys, and __proto__ keys', () => {
    expect(limitOf(() => checkValueLimits(new Array(1_000_000).fill(0), DEFAULT_PARSE_LIMITS))).toBe(
      'values',
    );
    expect(limitOf(() => checkValueLimits({ ['k'.repeat(2000)]: 1 }, DEFAULT_PARSE_LIMITS))).toBe(
      'keyLength',
    );
    expect(limitOf(() => checkValueLimits(JSON.parse('{"a":{"__proto__":1}}'), DEFAULT_PARSE_LIMITS))).toBe(
      'forbiddenKey',
    );
  });
});

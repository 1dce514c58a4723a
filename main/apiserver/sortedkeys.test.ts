import { describe, expect, it } from 'vitest';
import { SortedKeys } from './sortedkeys.js';

/** A key set beside its SortedKeys, changed at random, the order checked now and then. */
function check(seed: number): void {
  let state = seed;
  const rand = (n: number) => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state % n;
  };
  const keys = new Set<string>();
  const sorted = new SortedKeys(() => keys);
  for (let step = 0; step < 2_000; step++) {
    const key = `pods/ns-${rand(5)}/p-${rand(60)}`;
    const roll = rand(10);
    if (roll < 5 && !keys.has(key)) {
      keys.add(key);
      sorted.add(key);
    } else if (roll < 9 && keys.has(key)) {
      keys.delete(key);
      sorted.remove(key);
    } else if (roll === 9) {
      expect(sorted.ordered()).toEqual([...keys].sort());
    }
  }
  expect(sorted.ordered()).toEqual([...keys].sort());
}

describe('SortedKeys', () => {
  it('keeps the order through adds and removals in any mix, read at any moment', () => {
    for (let seed = 1; seed <= 20; seed++) check(seed);
  });

  it('keeps a key removed and added back (or added and removed) before a read exactly once (or not at all)', () => {
    const keys = new Set(['b', 'd']);
    const sorted = new SortedKeys(() => keys);
    expect(sorted.ordered()).toEqual(['b', 'd']);
    sorted.remove('b');
    sorted.add('b');
    sorted.add('c');
    sorted.remove('c');
    sorted.add('a');
    expect(sorted.ordered()).toEqual(['a', 'b', 'd']);
  });

  it('sorts every key afresh after reset', () => {
    const keys = new Set(['b', 'a']);
    const sorted = new SortedKeys(() => keys);
    expect(sorted.ordered()).toEqual(['a', 'b']);
    sorted.reset();
    keys.clear();
    keys.add('z');
    keys.add('y');
    sorted.add('ignored until read'); // nothing is tracked until the next read
    expect(sorted.ordered()).toEqual(['y', 'z']);
  });
});

import { describe, expect, it } from 'vitest';
import { KeyedHeap } from './keyedheap.js';

interface Item {
  key: string;
  n: number;
}
const heap = () =>
  new KeyedHeap<Item>(
    (i) => i.key,
    (a, b) => a.n < b.n,
  );

describe('KeyedHeap', () => {
  it('pops in order', () => {
    const h = heap();
    const ns = [5, 3, 9, 1, 7, 2, 8, 6, 4, 0];
    ns.forEach((n) => h.push({ key: `k${n}`, n }));
    const out: number[] = [];
    while (h.size) out.push(h.pop()!.n);
    expect(out).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('replaces by key and deletes from the middle, keeping the order', () => {
    const h = heap();
    for (let n = 0; n < 50; n++) h.push({ key: `k${n}`, n });
    h.push({ key: 'k10', n: -1 });
    h.push({ key: 'k0', n: 100 });
    expect(h.delete('k25')?.n).toBe(25);
    expect(h.delete('missing')).toBeUndefined();
    expect(h.get('k10')?.n).toBe(-1);
    expect(h.has('k25')).toBe(false);
    const out: number[] = [];
    while (h.size) out.push(h.pop()!.n);
    const expected = [
      -1,
      ...Array.from({ length: 49 }, (_, i) => i + 1).filter((n) => n !== 10 && n !== 25),
      100,
    ];
    expect(out).toEqual(expected);
  });

  it('stays ordered under random work', () => {
    const h = heap();
    const live = new Map<string, number>();
    let seed = 42;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let i = 0; i < 2000; i++) {
      const key = `k${Math.floor(rand() * 200)}`;
      const r = rand();
      if (r < 0.5) {
        const n = Math.floor(rand() * 1000);
        h.push({ key, n });
        live.set(key, n);
      } else if (r < 0.7) {
        h.delete(key);
        live.delete(key);
      } else if (h.size) {
        const top = h.pop()!;
        expect(top.n).toBe(Math.min(...live.values()));
        live.delete(top.key);
      }
      expect(h.size).toBe(live.size);
    }
  });
});

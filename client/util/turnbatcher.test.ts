import { describe, expect, it } from 'vitest';
import { TurnBatcher } from './turnbatcher.js';

describe('TurnBatcher', () => {
  it('hands on what one turn gathered together, in order, and nothing when there is none', () => {
    const sent: string[][] = [];
    const turns: Array<() => void> = [];
    const b = new TurnBatcher<string>((items) => sent.push(items), {
      maxItems: 100,
      later: (run) => turns.push(run),
    });
    b.add('A');
    b.add('B');
    b.add('C');
    expect(sent).toHaveLength(0);
    expect(turns).toHaveLength(1);
    turns.shift()!();
    expect(sent).toEqual([['A', 'B', 'C']]);
    b.add('D');
    turns.shift()!();
    expect(sent).toEqual([['A', 'B', 'C'], ['D']]);
    b.flush();
    expect(sent).toHaveLength(2);
  });

  it('hands a batch on early once it is full, by size or by count', () => {
    const sent: string[][] = [];
    const b = new TurnBatcher<string>((items) => sent.push(items), {
      maxItems: 5,
      maxSize: 100,
      sizeOf: (s) => s.length,
      later: () => undefined,
    });
    for (let i = 0; i < 4; i++) b.add('x'.repeat(30));
    expect(sent.map((s) => s.length)).toEqual([3]);
    b.flush();
    sent.length = 0;
    for (let i = 0; i < 6; i++) b.add('y');
    expect(sent.map((s) => s.length)).toEqual([5]);
    b.flush();
    expect(sent.map((s) => s.length)).toEqual([5, 1]);
  });
});

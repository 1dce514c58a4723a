/** The tables' keyboard: which key does what, in the rows and in the filter box. */
import { describe, expect, it } from 'vitest';
import { moveSelection, tableAction } from '../../renderer/src/table/keys.js';

describe('tableAction', () => {
  it('moves with the arrows and j/k, opens with Enter, filters with /', () => {
    expect(
      ['ArrowDown', 'j', 'ArrowUp', 'k', 'Home', 'End', 'PageDown', 'PageUp', 'Enter', '/'].map((key) =>
        tableAction({ key }, false),
      ),
    ).toEqual(['down', 'down', 'up', 'up', 'first', 'last', 'pageDown', 'pageUp', 'open', 'find']);
    expect(tableAction({ key: 'x' }, false)).toBeUndefined();
  });

  it('leaves shortcuts with modifiers to the browser and the app', () => {
    expect(tableAction({ key: 'j', ctrlKey: true }, false)).toBeUndefined();
    expect(tableAction({ key: '1', altKey: true }, false)).toBeUndefined();
    expect(tableAction({ key: 'ArrowDown', metaKey: true }, false)).toBeUndefined();
  });

  it('in the filter box, lets letters type and only steps out on Escape, ↓ or Enter', () => {
    expect(tableAction({ key: 'j' }, true)).toBeUndefined();
    expect(tableAction({ key: '/' }, true)).toBeUndefined();
    expect(tableAction({ key: 'Escape' }, true)).toBe('leave');
    expect(tableAction({ key: 'ArrowDown' }, true)).toBe('down');
    expect(tableAction({ key: 'Enter' }, true)).toBe('open');
  });
});

describe('moveSelection', () => {
  it('starts at the first row, stops at the ends, jumps by a page', () => {
    expect(moveSelection('down', -1, 10, 5)).toBe(0);
    expect(moveSelection('up', -1, 10, 5)).toBe(0);
    expect(moveSelection('down', 9, 10, 5)).toBe(9);
    expect(moveSelection('up', 0, 10, 5)).toBe(0);
    expect(moveSelection('pageDown', 3, 10, 5)).toBe(8);
    expect(moveSelection('pageDown', 8, 10, 5)).toBe(9);
    expect(moveSelection('pageUp', 3, 10, 5)).toBe(0);
    expect(moveSelection('last', 0, 10, 5)).toBe(9);
    expect(moveSelection('first', 7, 10, 5)).toBe(0);
    expect(moveSelection('down', 2, 0, 5)).toBe(-1);
  });
});

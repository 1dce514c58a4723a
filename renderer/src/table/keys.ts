/**
 * The tables' keyboard: ↓/j and ↑/k move the selection, Home/End and PageUp/PageDown jump,
 * Enter opens the selected row, / puts the cursor in the filter and Escape leaves it. Keys
 * typed into a field are the field's own, except Escape and the arrows that step out of the
 * filter into the rows.
 */
export type TableAction =
  'down' | 'up' | 'first' | 'last' | 'pageDown' | 'pageUp' | 'open' | 'find' | 'leave';

export interface KeyLike {
  key: string;
  ctrlKey?: boolean;
  metaKey?: boolean;
  altKey?: boolean;
}

/** What a key press means for a table; `inField` when the focus is in a text field. */
export function tableAction(e: KeyLike, inField: boolean): TableAction | undefined {
  if (e.ctrlKey || e.metaKey || e.altKey) return undefined;
  if (inField) {
    if (e.key === 'Escape') return 'leave';
    if (e.key === 'ArrowDown') return 'down';
    if (e.key === 'Enter') return 'open';
    return undefined;
  }
  switch (e.key) {
    case 'ArrowDown':
    case 'j':
      return 'down';
    case 'ArrowUp':
    case 'k':
      return 'up';
    case 'Home':
      return 'first';
    case 'End':
      return 'last';
    case 'PageDown':
      return 'pageDown';
    case 'PageUp':
      return 'pageUp';
    case 'Enter':
      return 'open';
    case '/':
      return 'find';
    default:
      return undefined;
  }
}

/** The selected index after `action` on `count` rows, `page` rows to a screen (-1: none). */
export function moveSelection(action: TableAction, index: number, count: number, page: number): number {
  if (count === 0) return -1;
  const last = count - 1;
  switch (action) {
    case 'down':
      return index < 0 ? 0 : Math.min(last, index + 1);
    case 'up':
      return index < 0 ? 0 : Math.max(0, index - 1);
    case 'first':
      return 0;
    case 'last':
      return last;
    case 'pageDown':
      return Math.min(last, Math.max(0, index) + page);
    case 'pageUp':
      return Math.max(0, index - page);
    default:
      return Math.min(index, last);
  }
}

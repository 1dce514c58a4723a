/** What a live table is made of: columns, and a source of objects that reports its changes. */
import type { Change, ObjectLike } from '../stores/informer.js';
import type { SortValue } from './sortkey.js';

export interface Column<T> {
  /** Also the cell's data-col attribute. */
  id: string;
  title: string;
  /** A CSS grid track, e.g. "minmax(0, 2fr)" or "7rem". */
  width: string;
  /** The cell's text; leave it out when a `cell-<id>` slot draws the cell. */
  text?: (row: T) => string;
  /** What the column sorts by; a column without it cannot be sorted. */
  sort?: (row: T) => SortValue;
  cellClass?: (row: T) => string | undefined;
  /** Numbers line up on the right. */
  numeric?: boolean;
}

export interface TableSource<T extends ObjectLike> {
  /** Every object, without copying. */
  values(): Iterable<T>;
  /** Each batch of changes once the source holds it; returns the unsubscribe function. */
  onBatch(listener: (changes: readonly Change<T>[]) => void): () => void;
}

export interface SortState {
  column: string;
  descending: boolean;
}

/** What a table's scrolling body (TableRows) offers its table, for the keyboard. */
export interface TableBodyHandle {
  scrollToIndex(index: number): void;
  /** Rows that fit on the screen: how far PageDown moves. */
  pageSize(): number;
  focus(): void;
}

/**
 * The rows of a table, filtered and sorted, kept up to date change by change: an object that
 * changed is taken out at its old place (binary search) and put in at its new one, so a watch
 * event costs O(log n) comparisons instead of a re-sort of 50,000 rows. A change that leaves
 * the sort value alone replaces the row in place. A row handed again as the very same object
 * has its sort value read afresh: it may come from another object (a node's heartbeat from its
 * Lease). A batch touching a large share of the rows (the first list, a relist) rebuilds
 * instead, which is cheaper then. Ties sort by object key, so the order is total and the same
 * on every rebuild.
 */
import { objectKey, type Change, type ObjectLike } from '../stores/informer.js';
import { compareKeys, sortKey, type SortValue } from './sortkey.js';

export interface SortOrder<T> {
  value: (row: T) => SortValue;
  descending: boolean;
}

/** Below this many changes in a batch, apply them one by one whatever the table's size. */
const ALWAYS_INCREMENTAL = 256;

export class SortedRows<T extends ObjectLike> {
  private rows: T[] = [];
  /** The row object currently in `rows` for each object key. */
  private present = new Map<string, T>();
  /** Sort keys per object version (objects are replaced, never changed, so this stays right). */
  private keys = new WeakMap<T, string | number>();

  constructor(
    private readonly source: () => Iterable<T>,
    private order: SortOrder<T>,
    private accept: (row: T) => boolean = () => true,
  ) {
    this.rebuild();
  }

  get length(): number {
    return this.rows.length;
  }

  at(index: number): T | undefined {
    return this.rows[index];
  }

  /** The rows in order (do not modify). */
  all(): readonly T[] {
    return this.rows;
  }

  setOrder(order: SortOrder<T>): void {
    this.order = order;
    this.keys = new WeakMap();
    this.rebuild();
  }

  setFilter(accept: (row: T) => boolean): void {
    this.accept = accept;
    this.rebuild();
  }

  /** Filters and sorts every object of the source again. */
  rebuild(): void {
    const decorated: Array<{ key: string | number; id: string; row: T }> = [];
    for (const row of this.source()) {
      if (this.accept(row)) decorated.push({ key: this.keyOf(row), id: objectKey(row), row });
    }
    const direction = this.order.descending ? -1 : 1;
    decorated.sort((a, b) => direction * compareKeys(a.key, b.key) || compareIds(a.id, b.id));
    this.rows = decorated.map((d) => d.row);
    this.present = new Map(decorated.map((d) => [d.id, d.row]));
  }

  apply(changes: readonly Change<T>[]): void {
    if (changes.length > ALWAYS_INCREMENTAL && changes.length * 8 > this.present.size) {
      // Every sort value is read afresh, those of rows handed again included.
      this.keys = new WeakMap();
      this.rebuild();
      return;
    }
    for (const { type, object } of changes) this.applyOne(type === 'DELETED' ? undefined : object, object);
  }

  /** The row's position, or -1 when the object is not shown. */
  indexOfKey(id: string): number {
    const row = this.present.get(id);
    return row ? this.find(row, id) : -1;
  }

  private applyOne(next: T | undefined, object: T): void {
    const id = objectKey(object);
    const old = this.present.get(id);
    const keep = next !== undefined && this.accept(next);
    if (old) {
      const oldKey = this.keyOf(old);
      const at = this.find(old, id);
      if (next === old) this.keys.delete(old);
      if (keep && compareKeys(oldKey, this.keyOf(next)) === 0) {
        this.rows[at] = next;
        this.present.set(id, next);
        return;
      }
      this.rows.splice(at, 1);
      this.present.delete(id);
    }
    if (!keep) return;
    this.rows.splice(this.lowerBound(this.keyOf(next), id), 0, next);
    this.present.set(id, next);
  }

  private find(row: T, id: string): number {
    const at = this.lowerBound(this.keyOf(row), id);
    if (this.rows[at] === row) return at;
    // Unreachable while sort keys are stable per object; stay correct if one is not.
    return this.rows.indexOf(row);
  }

  /** The first position whose row sorts at or after (key, id). */
  private lowerBound(key: string | number, id: string): number {
    const direction = this.order.descending ? -1 : 1;
    let lo = 0;
    let hi = this.rows.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const row = this.rows[mid];
      const c = direction * compareKeys(this.keyOf(row), key) || compareIds(objectKey(row), id);
      if (c < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private keyOf(row: T): string | number {
    let key = this.keys.get(row);
    if (key === undefined) {
      key = sortKey(this.order.value(row));
      this.keys.set(row, key);
    }
    return key;
  }
}

function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

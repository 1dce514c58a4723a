/**
 * A table's rows with something of another kind shown beside them (a node's heartbeat, read
 * from its Lease). When a joined object changes, its row is handed to the table again as it
 * is, so the table re-reads the row's sort value (SortedRows does for a row handed again) and
 * a table sorted by that column stays in order.
 */
import type { Change, ObjectLike } from '../stores/informer.js';
import type { TableSource } from './columns.js';

export interface RowStore<T extends ObjectLike> extends TableSource<T> {
  /** The row with this key (namespace/name, or name). */
  get(key: string): T | undefined;
}

export interface JoinedStore<J> {
  onBatch(listener: (changes: readonly Change<J>[]) => void): () => void;
}

export function joinedSource<T extends ObjectLike, J extends ObjectLike>(
  rows: RowStore<T>,
  joined: JoinedStore<J>,
  /** The key of the row a joined object belongs to (undefined: none). */
  rowKeyOf: (object: J) => string | undefined,
): TableSource<T> {
  return {
    values: () => rows.values(),
    onBatch(listener) {
      const stopRows = rows.onBatch(listener);
      const stopJoined = joined.onBatch((changes) => {
        const touched: Change<T>[] = [];
        for (const c of changes) {
          const key = rowKeyOf(c.object);
          const row = key === undefined ? undefined : rows.get(key);
          if (row) touched.push({ type: 'MODIFIED', object: row });
        }
        if (touched.length) listener(touched);
      });
      return () => {
        stopRows();
        stopJoined();
      };
    },
  };
}

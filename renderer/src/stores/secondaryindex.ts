/**
 * A secondary index over an informer's objects (client-go's Indexer with one index function):
 * objects grouped by one value each, e.g. pods by spec.nodeName, kept up to date from the
 * informer's changes so a node's pods are found without scanning every pod.
 */
import type { Change } from './informer.js';
import { objectKey, type ObjectLike } from './informer.js';

export class SecondaryIndex<T extends ObjectLike> {
  private readonly groups = new Map<string, Map<string, T>>();
  /** Where each object is filed, so a change can take it out of its old group. */
  private readonly valueOf = new Map<string, string>();

  constructor(private readonly indexValue: (object: T) => string | undefined) {}

  apply(changes: readonly Change<T>[]): void {
    for (const { type, object } of changes) {
      const key = objectKey(object);
      const before = this.valueOf.get(key);
      const after = type === 'DELETED' ? undefined : this.indexValue(object);
      if (before !== undefined && before !== after) {
        const group = this.groups.get(before);
        group?.delete(key);
        if (group && !group.size) this.groups.delete(before);
        this.valueOf.delete(key);
      }
      if (after === undefined) continue;
      let group = this.groups.get(after);
      if (!group) this.groups.set(after, (group = new Map()));
      group.set(key, object);
      this.valueOf.set(key, after);
    }
  }

  /** The objects filed under `value`, in no particular order. */
  get(value: string): T[] {
    return [...(this.groups.get(value)?.values() ?? [])];
  }

  clear(): void {
    this.groups.clear();
    this.valueOf.clear();
  }
}

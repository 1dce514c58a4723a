/**
 * The informer's local store: objects by key, plus named indexes (namespace, node, owner,
 * custom) kept in step on every change, so lookups like "pods on node X" are a map access.
 */
import type { IndexFunc } from './keys.js';

export class Indexer<T> {
  private readonly items = new Map<string, T>();
  private readonly indexFuncs = new Map<string, IndexFunc<T>>();
  /** index name → index value → keys */
  private readonly indices = new Map<string, Map<string, Set<string>>>();

  constructor(indexers: Record<string, IndexFunc<T>> = {}) {
    this.addIndexers(indexers);
  }

  /**
   * Adds indexes; existing objects are indexed at once. Adding the same function under the
   * same name again is a no-op (controllers sharing an informer may each ask for an index).
   */
  addIndexers(indexers: Record<string, IndexFunc<T>>): void {
    for (const [name, fn] of Object.entries(indexers)) {
      const existing = this.indexFuncs.get(name);
      if (existing === fn) continue;
      if (existing) throw new Error(`index ${name} already exists with another function`);
      this.indexFuncs.set(name, fn);
      const index = new Map<string, Set<string>>();
      this.indices.set(name, index);
      for (const [key, obj] of this.items) this.indexOne(index, fn, key, obj);
    }
  }

  get(key: string): T | undefined {
    return this.items.get(key);
  }

  has(key: string): boolean {
    return this.items.has(key);
  }

  list(): T[] {
    return [...this.items.values()];
  }

  keys(): string[] {
    return [...this.items.keys()];
  }

  get size(): number {
    return this.items.size;
  }

  /** Adds or replaces the object under `key`. */
  set(key: string, obj: T): void {
    const old = this.items.get(key);
    this.items.set(key, obj);
    this.reindex(key, old, obj);
  }

  delete(key: string): T | undefined {
    const old = this.items.get(key);
    if (old === undefined) return undefined;
    this.items.delete(key);
    this.reindex(key, old, undefined);
    return old;
  }

  /** Replaces everything. */
  replace(items: Map<string, T>): void {
    this.items.clear();
    for (const index of this.indices.values()) index.clear();
    for (const [key, obj] of items) this.set(key, obj);
  }

  /** Objects whose index `name` contains `value`. */
  byIndex(name: string, value: string): T[] {
    return this.indexKeys(name, value).map((k) => this.items.get(k)!);
  }

  indexKeys(name: string, value: string): string[] {
    const index = this.indices.get(name);
    if (!index) throw new Error(`no index named ${name}`);
    return [...(index.get(value) ?? [])];
  }

  /** Every value of an index that has at least one object. */
  indexValues(name: string): string[] {
    const index = this.indices.get(name);
    if (!index) throw new Error(`no index named ${name}`);
    return [...index.keys()];
  }

  private reindex(key: string, old: T | undefined, obj: T | undefined): void {
    for (const [name, fn] of this.indexFuncs) {
      const index = this.indices.get(name)!;
      const before = old === undefined ? [] : fn(old);
      const after = obj === undefined ? [] : fn(obj);
      if (before.length === after.length && before.every((v, i) => v === after[i])) continue;
      for (const v of before) {
        const set = index.get(v);
        set?.delete(key);
        if (set && set.size === 0) index.delete(v);
      }
      if (obj !== undefined) this.indexOne(index, fn, key, obj);
    }
  }

  private indexOne(index: Map<string, Set<string>>, fn: IndexFunc<T>, key: string, obj: T): void {
    for (const v of fn(obj)) {
      let set = index.get(v);
      if (!set) index.set(v, (set = new Set()));
      set.add(key);
    }
  }
}

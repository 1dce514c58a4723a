/**
 * The watch cache of one kind: the current objects and a window of recent events, kept in
 * step with the store by the cacher. It serves List and Watch from memory, like the
 * Kubernetes apiserver's Cacher: filtered watchers see objects enter and leave their
 * selection as ADDED and DELETED, and a watch from a resourceVersion older than the window
 * is refused as expired (the client lists again).
 */
import { ApiError } from '../../client/api/errors.js';
import type { KindInfo } from '../../client/api/kinds.js';
import type { FieldSelector, LabelSelector } from '../../client/api/selectors.js';
import type { KubeObject, WatchEventType } from '../../client/api/types.js';
import { prefixEnd } from '../storage/types.js';
import { kindPrefix } from './codec.js';
import { SortedKeys } from './sortedkeys.js';

/** One object as the cache holds it (frozen: shared by every reader, encoded once). */
export interface CachedObject {
  readonly key: string;
  readonly object: KubeObject;
  readonly rv: number;
  /** Kept for the layer that sends the entry (its wire encodings, made once for every reader). */
  memo?: object;
  /** Its values of INDEXED_FIELDS, in that order, once a replay asked (watchcache.ts). */
  indexedValues?: string[];
}

export interface CacheEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  rv: number;
  /** The object after the event; for DELETED its last state, at the delete's revision. */
  cur: CachedObject;
  prev?: CachedObject;
  /** When the cache received it (for the history window). */
  at: number;
}

export interface WatchFilter {
  namespace?: string;
  labels?: LabelSelector;
  fields?: FieldSelector;
}

export interface WatchSink {
  /** Returns false when the consumer cannot keep up; the cache then ends the watch. */
  event(type: Exclude<WatchEventType, 'BOOKMARK'>, obj: CachedObject): boolean;
  bookmark(rv: number, initialEventsEnd: boolean): void;
  end(err?: ApiError): void;
}

export interface WatchStart {
  /** Deliver the current state first as ADDED events. */
  initialEvents: boolean;
  /** After the initial events, a BOOKMARK marking their end. */
  initialEventsEndBookmark?: boolean;
  /** Without initial events: deliver every event after this revision. */
  fromRevision?: number;
  bookmarks: boolean;
}

export interface CacheWatcher {
  stop(): void;
}

type FieldGetter = (obj: KubeObject, field: string) => string | undefined;

interface ActiveWatcher {
  filter: WatchFilter;
  sink: WatchSink;
  bookmarks: boolean;
  /** Which of the bookmark slices this watcher's bookmarks go out in. */
  slice: number;
  stopped: boolean;
  /** The exact field value this watcher is filed under (see INDEXED_FIELDS). */
  index?: { field: string; value: string };
}

/**
 * Fields indexed by value, as Kubernetes' cacher indexes pods by spec.nodeName: with thousands
 * of agents each listing and watching its own pods and its own Node, a List reads only the
 * objects with the value it requires, and an event reaches the few watchers it can concern,
 * instead of every object or watcher being matched. The first field a request requires
 * exactly is used.
 */
const INDEXED_FIELDS = ['spec.nodeName', 'metadata.name'] as const;
type IndexedField = (typeof INDEXED_FIELDS)[number];

export interface WatchCacheOptions {
  /** How long events stay in the window. */
  historyMs: number;
  /** How many events at most. */
  historyMax: number;
  now: () => number;
  /** The field selectors the kind supports (default: all); objects are indexed by those of INDEXED_FIELDS. */
  selectableFields?: readonly string[];
}

export class WatchCache {
  private readonly objects = new Map<string, CachedObject>();
  private readonly sortedKeys = new SortedKeys(() => this.objects.keys());
  private history: CacheEvent[] = [];
  private historyHead = 0;
  /** Every event after this revision is in the window. */
  private historyStart = 0;
  private revision = 0;
  private readonly watchers = new Set<ActiveWatcher>();
  private nextSlice = 0;
  /** Watchers not filed under a field value: every event is matched against them. */
  private readonly unindexed = new Set<ActiveWatcher>();
  /** field → value → the watchers that require that value. */
  private readonly indexed = new Map<string, Map<string, Set<ActiveWatcher>>>();
  /** field → value → the key (or keys) of the objects that have it. */
  private readonly keysByValue = new Map<string, Map<string, FiledKeys>>();

  constructor(
    readonly info: KindInfo,
    private readonly getField: FieldGetter,
    private readonly options: WatchCacheOptions,
  ) {
    for (const field of INDEXED_FIELDS)
      if (!options.selectableFields || options.selectableFields.includes(field))
        this.keysByValue.set(field, new Map());
  }

  get resourceVersion(): number {
    return this.revision;
  }

  get size(): number {
    return this.objects.size;
  }

  get watcherCount(): number {
    return this.watchers.size;
  }

  /** Replaces the whole state (start-up and relist after the store's watch failed). */
  reset(items: CachedObject[], revision: number): void {
    this.objects.clear();
    for (const byValue of this.keysByValue.values()) byValue.clear();
    for (const item of items) {
      this.objects.set(item.key, item);
      this.fileObject(item);
    }
    this.sortedKeys.reset();
    this.history = [];
    this.historyHead = 0;
    this.historyStart = revision;
    this.revision = revision;
    const err = new ApiError(
      'Expired',
      `the ${this.info.plural} watch cache was rebuilt from the store; list again and watch from the new resourceVersion`,
    );
    for (const w of this.watchers) this.endWatcher(w, err);
  }

  /** Applies events from the store, in revision order, and fans them out to watchers. */
  apply(events: CacheEvent[]): void {
    // Superseded versions live on only in the history: their wire encodings, made for the
    // watchers that just got them, go once the events are out (a replay makes them again).
    const superseded: CachedObject[] = [];
    for (const e of events) {
      const key = e.cur.key;
      const old = this.objects.get(key);
      if (e.type === 'DELETED') {
        if (old) {
          this.objects.delete(key);
          this.unfileObject(old);
          this.sortedKeys.remove(key);
        }
      } else {
        this.objects.set(key, e.cur);
        if (old) this.refileObject(old, e.cur);
        else {
          this.fileObject(e.cur);
          this.sortedKeys.add(key);
        }
      }
      this.history.push(e);
      this.revision = e.rv;
      if (e.prev) superseded.push(e.prev);
      if (e.type === 'DELETED') superseded.push(e.cur);
    }
    this.trimHistory();
    if (this.watchers.size > 0) {
      for (const e of events) {
        for (const w of this.unindexed) if (!w.stopped) this.deliver(w, e);
        if (this.indexed.size === 0) continue;
        for (const w of this.indexedWatchersFor(e)) if (!w.stopped) this.deliver(w, e);
      }
    }
    for (const entry of superseded) entry.memo = undefined;
  }

  /** The filed watchers an event can concern: those under its object's value before and after. */
  private indexedWatchersFor(e: CacheEvent): Set<ActiveWatcher> {
    const out = new Set<ActiveWatcher>();
    for (const [field, byValue] of this.indexed) {
      for (const obj of e.prev ? [e.cur.object, e.prev.object] : [e.cur.object]) {
        const filed = byValue.get(this.getField(obj, field) ?? '');
        if (filed) for (const w of filed) out.add(w);
      }
    }
    return out;
  }

  /** The store has delivered everything up to `rv` (events of other kinds, or a progress notice). */
  advance(rv: number): void {
    if (rv > this.revision) this.revision = rv;
  }

  get(key: string): CachedObject | undefined {
    return this.objects.get(key);
  }

  /** Objects matching the filter, sorted by key, starting after `afterKey`. */
  list(
    filter: WatchFilter,
    options: { afterKey?: string; limit?: number } = {},
  ): { items: CachedObject[]; more: boolean } {
    // Sorted either way, so the namespace range and afterKey below work on both.
    const keys = this.filedKeys(filter) ?? this.keysInOrder();
    let start = 0;
    let end = keys.length;
    if (filter.namespace && this.info.namespaced) {
      // A namespace is a contiguous range of keys: no need to look at the others.
      const prefix = kindPrefix(this.info, filter.namespace);
      start = upperBound(keys, prefix);
      end = upperBound(keys, prefixEnd(prefix));
    }
    if (options.afterKey !== undefined) start = Math.max(start, upperBound(keys, options.afterKey));
    const limit = options.limit && options.limit > 0 ? options.limit : Infinity;
    const items: CachedObject[] = [];
    const unfiltered = !filter.labels && !filter.fields && (!filter.namespace || this.info.namespaced);
    for (let i = start; i < end; i++) {
      const item = this.objects.get(keys[i])!;
      if (unfiltered || this.matches(filter, item.object)) {
        if (items.length === limit) return { items, more: true };
        items.push(item);
      }
    }
    return { items, more: false };
  }

  /** The keys filed under the exact value of an indexed field the filter requires (sorted), if any. */
  private filedKeys(filter: WatchFilter): string[] | undefined {
    if (!filter.fields) return undefined;
    for (const [field, byValue] of this.keysByValue) {
      const value = filter.fields.requiresExactMatch(field);
      if (value === undefined) continue;
      const filed = byValue.get(value);
      return filed === undefined ? [] : typeof filed === 'string' ? [filed] : [...filed].sort();
    }
    return undefined;
  }

  private fieldValue(obj: KubeObject, field: string): string {
    return this.getField(obj, field) ?? '';
  }

  private fileObject(item: CachedObject): void {
    for (const [field, byValue] of this.keysByValue)
      fileKey(byValue, this.fieldValue(item.object, field), item.key);
  }

  private unfileObject(item: CachedObject): void {
    for (const [field, byValue] of this.keysByValue)
      unfileKey(byValue, this.fieldValue(item.object, field), item.key);
  }

  private refileObject(old: CachedObject, cur: CachedObject): void {
    for (const [field, byValue] of this.keysByValue) {
      const was = this.fieldValue(old.object, field);
      const is = this.fieldValue(cur.object, field);
      if (was === is) continue;
      unfileKey(byValue, was, cur.key);
      fileKey(byValue, is, cur.key);
    }
  }

  /** Counts objects after `afterKey` (for remainingItemCount on unfiltered pages). */
  countAfter(afterKey: string): number {
    const keys = this.keysInOrder();
    return keys.length - upperBound(keys, afterKey);
  }

  watch(start: WatchStart, filter: WatchFilter, sink: WatchSink): CacheWatcher {
    const w: ActiveWatcher = {
      filter,
      sink,
      bookmarks: start.bookmarks,
      slice: this.nextSlice++,
      stopped: false,
    };
    if (start.initialEvents) {
      for (const item of this.list(filter).items) {
        if (!sink.event('ADDED', item)) {
          this.endWatcher(w, slowConsumer(this.info, this.revision));
          return { stop: () => undefined };
        }
      }
      if (start.initialEventsEndBookmark) sink.bookmark(this.revision, true);
    } else {
      const from = start.fromRevision ?? this.revision;
      if (from < this.historyStart) throw tooOld(this.info, from, this.historyStart);
      // A watcher of one node's pods resuming skips, by the events' indexed values, what cannot
      // concern it: ten thousand agents resuming their watches every few minutes against a
      // history of a rollout's events otherwise matched every event against every selector.
      const index = watcherIndex(filter);
      const at = index ? INDEXED_FIELDS.indexOf(index.field) : -1;
      for (let i = this.firstEventAfter(from); i < this.history.length; i++) {
        const e = this.history[i];
        if (
          index &&
          this.indexedValue(e.cur, at) !== index.value &&
          (!e.prev || this.indexedValue(e.prev, at) !== index.value)
        )
          continue;
        this.deliver(w, e);
        if (w.stopped) return { stop: () => undefined };
      }
    }
    this.addWatcher(w);
    return {
      stop: () => {
        w.stopped = true;
        this.removeWatcher(w);
      },
    };
  }

  private addWatcher(w: ActiveWatcher): void {
    this.watchers.add(w);
    w.index = watcherIndex(w.filter);
    if (!w.index) {
      this.unindexed.add(w);
      return;
    }
    const { field, value } = w.index;
    let byValue = this.indexed.get(field);
    if (!byValue) this.indexed.set(field, (byValue = new Map()));
    let filed = byValue.get(value);
    if (!filed) byValue.set(value, (filed = new Set()));
    filed.add(w);
  }

  /** The object's value of INDEXED_FIELDS[at], worked out once per cached object. */
  private indexedValue(item: CachedObject, at: number): string {
    item.indexedValues ??= INDEXED_FIELDS.map((field) => this.fieldValue(item.object, field));
    return item.indexedValues[at];
  }

  private removeWatcher(w: ActiveWatcher): void {
    this.watchers.delete(w);
    if (!w.index) {
      this.unindexed.delete(w);
      return;
    }
    const byValue = this.indexed.get(w.index.field);
    const filed = byValue?.get(w.index.value);
    if (!byValue || !filed) return;
    filed.delete(w);
    if (filed.size === 0) byValue.delete(w.index.value);
    if (byValue.size === 0) this.indexed.delete(w.index.field);
  }

  /**
   * Sends a BOOKMARK at the current revision to the watchers that asked for them, in slice
   * `slice` of `slices` (watchers are dealt into slices as they start): a period's bookmarks
   * go out a slice at a time instead of all at once.
   */
  bookmark(slice = 0, slices = 1): void {
    for (const w of this.watchers)
      if (w.bookmarks && !w.stopped && w.slice % slices === slice) w.sink.bookmark(this.revision, false);
  }

  /** Ends every watch (shutdown). */
  close(err?: ApiError): void {
    for (const w of this.watchers) this.endWatcher(w, err);
  }

  matches(filter: WatchFilter, obj: KubeObject): boolean {
    const meta = obj.metadata;
    if (filter.namespace && meta?.namespace !== filter.namespace) return false;
    if (filter.labels && !filter.labels.matches(meta?.labels)) return false;
    if (filter.fields && !filter.fields.matches((f) => this.getField(obj, f))) return false;
    return true;
  }

  private deliver(w: ActiveWatcher, e: CacheEvent): void {
    const now = this.matches(w.filter, e.cur.object);
    const before = e.prev !== undefined && this.matches(w.filter, e.prev.object);
    let ok = true;
    if (e.type === 'ADDED') {
      if (now) ok = w.sink.event('ADDED', e.cur);
    } else if (e.type === 'DELETED') {
      if (before || (e.prev === undefined && now)) ok = w.sink.event('DELETED', e.cur);
    } else if (now && before) {
      ok = w.sink.event('MODIFIED', e.cur);
    } else if (now) {
      ok = w.sink.event('ADDED', e.cur);
    } else if (before) {
      // The object left the watcher's selection: to the watcher it is gone.
      ok = w.sink.event('DELETED', e.cur);
    }
    if (!ok) this.endWatcher(w, slowConsumer(this.info, e.rv));
  }

  private endWatcher(w: ActiveWatcher, err?: ApiError): void {
    if (w.stopped) return;
    w.stopped = true;
    this.removeWatcher(w);
    w.sink.end(err);
  }

  private keysInOrder(): string[] {
    return this.sortedKeys.ordered();
  }

  private firstEventAfter(rv: number): number {
    let lo = this.historyHead;
    let hi = this.history.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.history[mid].rv <= rv) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private trimHistory(): void {
    const cutoff = this.options.now() - this.options.historyMs;
    while (
      this.historyHead < this.history.length &&
      (this.history.length - this.historyHead > this.options.historyMax ||
        this.history[this.historyHead].at < cutoff)
    ) {
      this.historyStart = this.history[this.historyHead].rv;
      this.historyHead++;
    }
    // Compact the array now and then instead of shifting on every event.
    if (this.historyHead > 1024 && this.historyHead * 2 > this.history.length) {
      this.history = this.history.slice(this.historyHead);
      this.historyHead = 0;
    }
  }
}

/** The keys under one field value: most values (names) have one object, so one string, not a Set. */
type FiledKeys = string | Set<string>;

function fileKey(byValue: Map<string, FiledKeys>, value: string, key: string): void {
  const filed = byValue.get(value);
  if (filed === undefined) byValue.set(value, key);
  else if (typeof filed === 'string') {
    if (filed !== key) byValue.set(value, new Set([filed, key]));
  } else filed.add(key);
}

function unfileKey(byValue: Map<string, FiledKeys>, value: string, key: string): void {
  const filed = byValue.get(value);
  if (filed === key) byValue.delete(value);
  else if (typeof filed === 'object') {
    filed.delete(key);
    if (filed.size === 1) byValue.set(value, filed.values().next().value!);
  }
}

/** The exact value of an indexed field a watcher's filter requires, the first there is. */
function watcherIndex(filter: WatchFilter): { field: IndexedField; value: string } | undefined {
  for (const field of INDEXED_FIELDS) {
    const value = filter.fields?.requiresExactMatch(field);
    if (value !== undefined) return { field, value };
  }
  return undefined;
}

function upperBound(keys: string[], key: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keys[mid] <= key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function tooOld(info: KindInfo, rv: number, oldest: number): ApiError {
  return new ApiError(
    'Expired',
    `too old resource version: ${rv} (the oldest ${info.plural} watch can start at ${oldest}); list again and watch from the list's resourceVersion`,
  );
}

function slowConsumer(info: KindInfo, rv: number): ApiError {
  return new ApiError(
    'Unavailable',
    `the ${info.plural} watch was closed because the client fell too far behind at resourceVersion ${rv}; watch again from the last resourceVersion you received`,
  );
}

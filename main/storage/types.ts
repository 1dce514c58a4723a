/**
 * The storage interface, in the spirit of etcd's and kine's: a handful of operations with
 * revisions everywhere. Only the apiserver uses it. Every write gets a new, strictly
 * increasing, cluster-wide revision; that revision is the object's resourceVersion.
 *
 * Revision availability is uniform across backends: after `compact(C)`, a revision R can be
 * listed at or watched from (exclusive) if and only if R >= C; anything older fails with
 * StorageError code 'Compacted'.
 */

import type { Registry } from 'prom-client';

export interface KeyValue {
  key: string;
  value: string;
  /** Revision of the write that created this key (the first write after a delete). */
  createRevision: number;
  /** Revision of the last write to this key. */
  modRevision: number;
}

export interface ListOptions {
  /** List the state as of this revision; 0 or unset means the current revision. */
  revision?: number;
  /** Stop after this many keys (0 or unset: no limit). */
  limit?: number;
  /** Only keys >= startKey (inclusive), for pagination. */
  startKey?: string;
}

export interface ListResult {
  items: KeyValue[];
  /** The revision the list reflects. */
  revision: number;
  /** Keys left after this page (with a limit). */
  remaining: number;
}

export interface StorageEvent {
  type: 'put' | 'delete';
  key: string;
  /** For a put, the new value; for a delete, the last value before the delete. */
  value: string;
  /** For a put that replaced an existing value, that value. */
  prevValue?: string;
  /** The revision of this write. */
  revision: number;
  createRevision: number;
}

export interface WatchHandle {
  cancel(): void;
}

export interface WatchCallbacks {
  /** Events in revision order, batched; never a gap, never a duplicate. */
  onEvents(events: StorageEvent[]): void;
  /** The watch ended and will deliver nothing more (e.g. the revision was compacted). */
  onError(err: StorageError): void;
  /**
   * Optional: the backend has delivered every event up to `revision` (a progress notice,
   * used to keep caches provably fresh when the watched prefix is quiet).
   */
  onProgress?(revision: number): void;
}

export interface Storage {
  readonly backend: 'sqlite' | 'etcd';
  get(key: string): Promise<KeyValue | undefined>;
  list(prefix: string, options?: ListOptions): Promise<ListResult>;
  /** Fails with 'KeyExists' when the key exists. */
  create(key: string, value: string): Promise<KeyValue>;
  /**
   * Compare-and-swap on the key's modRevision. Fails with 'Conflict' (carrying the current
   * value when there is one) or 'NotFound'.
   */
  update(key: string, value: string, expectedRevision: number): Promise<KeyValue>;
  /**
   * Deletes the key, optionally only at the expected modRevision ('Conflict' otherwise).
   * Returns the deleted value with `modRevision` set to the revision of the delete.
   */
  delete(key: string, expectedRevision?: number): Promise<KeyValue>;
  /** Events for keys under `prefix` with revision > fromRevision, in order. */
  watch(prefix: string, fromRevision: number, callbacks: WatchCallbacks): WatchHandle;
  currentRevision(): Promise<number>;
  /** The oldest revision still available (0 when nothing was compacted). */
  compactedRevision(): Promise<number>;
  /** Drops history older than `revision`. */
  compact(revision: number): Promise<void>;
  /** Registers the backend's own metrics (etcd: its compactions), where it has any. */
  registerMetrics?(registry: Registry): void;
  /** Flushes pending writes, stops timers and watches, releases the backend. */
  close(): Promise<void>;
}

export type StorageErrorCode =
  'KeyExists' | 'NotFound' | 'Conflict' | 'Compacted' | 'Unavailable' | 'TooLarge';

export class StorageError extends Error {
  constructor(
    readonly code: StorageErrorCode,
    message: string,
    readonly details: {
      key?: string;
      current?: KeyValue;
      compactedRevision?: number;
      requestedRevision?: number;
    } = {},
  ) {
    super(message);
    this.name = 'StorageError';
  }
}

export function isStorageError(err: unknown, code?: StorageErrorCode): err is StorageError {
  return err instanceof StorageError && (code === undefined || err.code === code);
}

/** The exclusive upper bound of a prefix range: every key under `prefix` is < prefixEnd(prefix). */
export function prefixEnd(prefix: string): string {
  if (prefix === '') return '\uffff';
  return prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
}

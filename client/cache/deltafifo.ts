/**
 * DeltaFIFO (client-go): a queue of object keys, each carrying every change (delta) that
 * happened to the object since it was last popped. A key is queued once however many changes
 * pile up ("compression": the consumer sees them together, in order). `replace` — what a
 * relist does — marks every listed object Replaced and every known object missing from the
 * list Deleted with its last known state, so nothing that vanished during a gap goes unseen.
 */
import type { ObjectLike } from '../api/types.js';
import { metaNamespaceKey } from './keys.js';

export type DeltaType = 'Added' | 'Updated' | 'Deleted' | 'Replaced';

/** A deletion seen only by its absence from a relist: `obj` is the last state we knew. */
export class DeletedFinalStateUnknown<T> {
  constructor(
    readonly key: string,
    readonly obj: T,
  ) {}
}

export interface Delta<T> {
  type: DeltaType;
  object: T | DeletedFinalStateUnknown<T>;
}

/** What the FIFO knows of objects already handed to the consumer (the informer's indexer). */
export interface KnownObjects<T> {
  keys(): string[];
  get(key: string): T | undefined;
}

export class FifoClosedError extends Error {
  constructor() {
    super('the DeltaFIFO is closed');
  }
}

export class DeltaFIFO<T extends ObjectLike> {
  private readonly items = new Map<string, Delta<T>[]>();
  private queue: string[] = [];
  private head = 0;
  private waiter: (() => void) | undefined;
  private closed = false;
  private populated = false;
  private initialPopulationCount = 0;

  constructor(
    private readonly known: KnownObjects<T>,
    private readonly keyOf: (obj: T) => string = metaNamespaceKey,
  ) {}

  add(obj: T): void {
    this.populated = true;
    this.enqueue('Added', obj);
  }

  update(obj: T): void {
    this.populated = true;
    this.enqueue('Updated', obj);
  }

  delete(obj: T): void {
    this.populated = true;
    this.enqueue('Deleted', obj);
  }

  /**
   * The result of a list: `list` is the whole truth. Objects in it are Replaced; objects the
   * consumer knows (or that are queued) but that are not in it are Deleted, carrying their
   * last known state.
   */
  replace(list: T[]): void {
    const keys = new Set<string>();
    for (const obj of list) {
      const key = this.keyOf(obj);
      keys.add(key);
      this.enqueueKey(key, { type: 'Replaced', object: obj });
    }
    let deletions = 0;
    for (const key of this.known.keys()) {
      if (keys.has(key)) continue;
      const last = this.known.get(key);
      if (last === undefined) continue;
      deletions++;
      this.enqueueKey(key, { type: 'Deleted', object: new DeletedFinalStateUnknown(key, last) });
    }
    // Queued but never delivered and now gone: delete with the newest state we saw.
    for (const [key, deltas] of this.items) {
      if (keys.has(key) || this.known.get(key) !== undefined) continue;
      const newest = deltas[deltas.length - 1];
      if (newest.type === 'Deleted') continue;
      deletions++;
      this.enqueueKey(key, {
        type: 'Deleted',
        object: new DeletedFinalStateUnknown(key, unwrap(newest.object)),
      });
    }
    if (!this.populated) {
      this.populated = true;
      this.initialPopulationCount = keys.size + deletions;
    }
  }

  /** True once the first replace() has been fully popped. */
  hasSynced(): boolean {
    return this.populated && this.initialPopulationCount === 0;
  }

  get length(): number {
    return this.queue.length - this.head;
  }

  /**
   * Waits for the next key and hands its deltas to `process` (which may be async); the key's
   * deltas are removed first, so changes arriving meanwhile queue it again.
   */
  async pop(process: (deltas: Delta<T>[], isInInitialList: boolean) => void | Promise<void>): Promise<void> {
    while (this.length === 0) {
      if (this.closed) throw new FifoClosedError();
      await new Promise<void>((resolve) => (this.waiter = resolve));
    }
    const key = this.queue[this.head++];
    // Drained: start again, rather than keep every key popped since the last compaction.
    if (this.head === this.queue.length) {
      this.queue = [];
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    const deltas = this.items.get(key)!;
    this.items.delete(key);
    const initial = this.initialPopulationCount > 0;
    if (initial) this.initialPopulationCount--;
    await process(deltas, initial);
  }

  close(): void {
    this.closed = true;
    this.wake();
  }

  /** The deltas queued for a key (tests and debugging). */
  peek(key: string): Delta<T>[] | undefined {
    return this.items.get(key);
  }

  private enqueue(type: DeltaType, obj: T): void {
    this.enqueueKey(this.keyOf(obj), { type, object: obj });
  }

  private enqueueKey(key: string, delta: Delta<T>): void {
    const existing = this.items.get(key);
    if (existing) {
      existing.push(delta);
      dedupDeletions(existing);
      return;
    }
    this.items.set(key, [delta]);
    this.queue.push(key);
    this.wake();
  }

  private wake(): void {
    const w = this.waiter;
    this.waiter = undefined;
    w?.();
  }
}

export function unwrap<T>(o: T | DeletedFinalStateUnknown<T>): T {
  return o instanceof DeletedFinalStateUnknown ? o.obj : o;
}

/** Two deletions in a row are one; keep the one that knows the final state. */
function dedupDeletions<T>(deltas: Delta<T>[]): void {
  const n = deltas.length;
  if (n < 2) return;
  const a = deltas[n - 2];
  const b = deltas[n - 1];
  if (a.type !== 'Deleted' || b.type !== 'Deleted') return;
  const keep = b.object instanceof DeletedFinalStateUnknown ? a : b;
  deltas.splice(n - 2, 2, keep);
}

/**
 * Gathers what becomes ready in the same turn of the event loop and hands it on together at the
 * end of the turn (or sooner, once the batch is full). A watch stream uses it so that a busy
 * server sends its events in a few messages rather than one per event.
 */

export interface TurnBatcherOptions<T> {
  /** A batch is handed on once it holds this many items… */
  maxItems: number;
  /** …or would pass this size. */
  maxSize?: number;
  sizeOf?: (item: T) => number;
  /** Runs the end-of-turn flush (default setImmediate; tests run it by hand). */
  later?: (run: () => void) => void;
}

export class TurnBatcher<T> {
  private items: T[] = [];
  private size = 0;
  private scheduled = false;

  constructor(
    private readonly send: (items: T[]) => void,
    private readonly options: TurnBatcherOptions<T>,
  ) {}

  add(item: T): void {
    const size = this.options.sizeOf?.(item) ?? 0;
    if (this.options.maxSize !== undefined && this.size + size > this.options.maxSize) this.flush();
    this.items.push(item);
    this.size += size;
    if (this.items.length >= this.options.maxItems) return this.flush();
    if (this.scheduled) return;
    this.scheduled = true;
    (this.options.later ?? setImmediate)(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  /** Hands on what is gathered now (before the stream ends, so nothing gathered is lost). */
  flush(): void {
    if (!this.items.length) return;
    const items = this.items;
    this.items = [];
    this.size = 0;
    this.send(items);
  }
}

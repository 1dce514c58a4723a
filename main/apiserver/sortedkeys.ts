/**
 * A watch cache's keys in sorted order, for paged and namespace-ranged lists. Writes far
 * outnumber lists that need the order: keeping one array sorted on every insert moved the
 * whole array each time (a splice), which at 100,000 pods and their events was a tenth of the
 * server's CPU during a rollout and grew with the square of the cluster. Here an insert or a
 * removal is only noted; the next reader merges the notes into the array in one pass.
 */
export class SortedKeys {
  /** Sorted, without the pending changes; undefined until a reader first asks. */
  private sorted: string[] | undefined;
  private readonly added = new Set<string>();
  private readonly removed = new Set<string>();

  /** @param all every key, for the first reader (and after reset()). */
  constructor(private readonly all: () => Iterable<string>) {}

  /** A key that was not there before. */
  add(key: string): void {
    if (!this.sorted) return;
    // Removed and added back before anyone read: it is still in the array.
    if (!this.removed.delete(key)) this.added.add(key);
  }

  remove(key: string): void {
    if (!this.sorted) return;
    if (!this.added.delete(key)) this.removed.add(key);
  }

  /** Forgets the order: the next reader sorts every key afresh. */
  reset(): void {
    this.sorted = undefined;
    this.added.clear();
    this.removed.clear();
  }

  /** Every key, sorted (shared: do not change it). */
  ordered(): string[] {
    if (!this.sorted) {
      this.sorted = [...this.all()].sort();
      return this.sorted;
    }
    if (this.added.size || this.removed.size) this.sorted = this.merged(this.sorted);
    return this.sorted;
  }

  private merged(sorted: string[]): string[] {
    const added = [...this.added].sort();
    const removed = this.removed;
    const out: string[] = [];
    let j = 0;
    for (const key of sorted) {
      if (removed.has(key)) continue;
      while (j < added.length && added[j] < key) out.push(added[j++]);
      out.push(key);
    }
    while (j < added.length) out.push(added[j++]);
    this.added.clear();
    this.removed.clear();
    return out;
  }
}

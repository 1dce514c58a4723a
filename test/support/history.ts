import { expect } from 'vitest';
import type { Storage } from '../../main/storage/types.js';

/**
 * Writes one key over and over and notes (time, revision) samples as a compactor would, so a
 * test can say which revision was current a given time ago.
 */
export class HistoryWriter {
  revision = 0;
  private readonly samples: Array<{ at: number; rev: number }> = [];

  constructor(
    public store: Storage,
    private readonly key = '/k',
  ) {}

  async write(n: number): Promise<void> {
    if (this.revision === 0) this.revision = (await this.store.create(this.key, '0')).modRevision;
    for (let i = 0; i < n; i++)
      this.revision = (await this.store.update(this.key, String(i), this.revision)).modRevision;
  }

  note(at: number, rev: number): void {
    this.samples.push({ at, rev });
  }

  /** The newest revision noted at or before `cutoff` (0 when none is that old). */
  asOf(cutoff: number): number {
    return Math.max(0, ...this.samples.filter((x) => x.at <= cutoff).map((x) => x.rev));
  }
}

/** A watcher that resumes from `from` gets every event after it, up to `last`, without error. */
export async function expectEveryEventSince(store: Storage, prefix: string, from: number, last: number) {
  const events: number[] = [];
  const errors: unknown[] = [];
  const w = store.watch(prefix, from, {
    onEvents: (e) => events.push(...e.map((x) => x.revision)),
    onError: (err) => errors.push(err),
  });
  try {
    await expect.poll(() => events.at(-1)).toBe(last);
    expect(events[0]).toBe(from + 1);
    expect(errors).toEqual([]);
  } finally {
    w.cancel();
  }
}

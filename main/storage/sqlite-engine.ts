/**
 * The SQLite side of the store, synchronous (better-sqlite3): a kine-style revision log where
 * every write appends a row whose primary key is the new revision and the latest row of a key
 * is its state (a tombstone row marks a delete). It runs inline (in-memory stores) or inside a
 * worker thread (files), so commits — which wait for fsync — never block the event loop that
 * serves clients.
 */
import Database from 'better-sqlite3';
import type { KeyValue, StorageEvent } from './types.js';
import { PERSISTED_SAMPLES } from './retention.js';

export interface Row {
  rev: number;
  key: string;
  created: number;
  deleted: number;
  prev_rev: number;
  value: string;
}

export type WriteOp =
  | { kind: 'create'; key: string; value: string }
  | { kind: 'update'; key: string; value: string; expected: number }
  | { kind: 'delete'; key: string; expected?: number };

/** A write's outcome, as plain data (it may cross a thread boundary). */
export type Outcome =
  | { ok: true; kv: KeyValue; event: StorageEvent }
  | { ok: false; code: 'KeyExists' | 'NotFound' | 'Conflict'; message: string; current?: KeyValue };

export interface EngineState {
  revision: number;
  compactRev: number;
  compactProgress: number;
  /** (time, revision) samples compaction counts its retention from (survive restarts). */
  retentionSamples: Array<{ at: number; rev: number }>;
}

export interface Stats {
  rows: number;
  pageCount: number;
  pageSize: number;
  freelist: number;
}

const COMPACT_CHUNK = 1000;

export function toKeyValue(row: Row): KeyValue {
  return { key: row.key, value: row.value, createRevision: row.created, modRevision: row.rev };
}

export class SqliteEngine {
  private readonly db: Database.Database;
  private revision = 0;
  private readonly stmt: {
    latest: Database.Statement<[string], Row>;
    latestAt: Database.Statement<[string, number], Row>;
    insert: Database.Statement<[number, string, number, number, number, string]>;
    setMeta: Database.Statement<[string, number]>;
    list: Database.Statement<[string, string, number, number], Row>;
    count: Database.Statement<[string, string, number], { n: number }>;
    history: Database.Statement<
      [number, number, string, string, number],
      Row & { prev_value: string | null }
    >;
    compactScan: Database.Statement<[number, number, number], Pick<Row, 'rev' | 'prev_rev' | 'deleted'>>;
    deleteRev: Database.Statement<[number]>;
  };

  /**
   * `writer`: this connection creates the schema and writes; otherwise it only reads a file
   * another connection (the worker's) writes.
   */
  constructor(path: string, writer: boolean, durable: boolean) {
    // Fail fast when another process holds the file instead of waiting for it.
    this.db = new Database(path, { timeout: writer ? 250 : 5000 });
    if (writer) {
      // auto_vacuum must be chosen before the first table exists.
      this.db.pragma('auto_vacuum = INCREMENTAL');
      this.db.pragma('journal_mode = WAL');
      this.db.pragma(`synchronous = ${durable ? 'FULL' : 'OFF'}`);
      this.db.pragma('journal_size_limit = 67108864');
      this.db.exec(`
        CREATE TABLE IF NOT EXISTS kv_log (
          rev INTEGER PRIMARY KEY,
          key TEXT NOT NULL,
          created INTEGER NOT NULL,
          deleted INTEGER NOT NULL,
          prev_rev INTEGER NOT NULL,
          value TEXT NOT NULL
        );
        CREATE INDEX IF NOT EXISTS kv_log_key_rev ON kv_log(key, rev);
        CREATE TABLE IF NOT EXISTS kv_meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
      `);
    } else {
      this.db.pragma('query_only = true');
    }
    const cols = 'rev, key, created, deleted, prev_rev, value';
    const latestPerKey = `SELECT key, MAX(rev) AS mrev FROM kv_log WHERE key >= ? AND key < ? AND rev <= ? GROUP BY key`;
    this.stmt = {
      latest: this.db.prepare(`SELECT ${cols} FROM kv_log WHERE key = ? ORDER BY rev DESC LIMIT 1`),
      // The same seek on kv_log_key_rev, bounded: a reader sees no commit its store has not taken in.
      latestAt: this.db.prepare(
        `SELECT ${cols} FROM kv_log WHERE key = ? AND rev <= ? ORDER BY rev DESC LIMIT 1`,
      ),
      insert: this.db.prepare(
        'INSERT INTO kv_log (rev, key, created, deleted, prev_rev, value) VALUES (?, ?, ?, ?, ?, ?)',
      ),
      setMeta: this.db.prepare(
        'INSERT INTO kv_meta (name, value) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET value = excluded.value',
      ),
      list: this.db.prepare(
        `SELECT l.rev, l.key, l.created, l.deleted, l.prev_rev, l.value FROM kv_log l JOIN (${latestPerKey}) m ON l.rev = m.mrev WHERE l.deleted = 0 ORDER BY l.key LIMIT ?`,
      ),
      count: this.db.prepare(
        `SELECT COUNT(*) AS n FROM kv_log l JOIN (${latestPerKey}) m ON l.rev = m.mrev WHERE l.deleted = 0`,
      ),
      history: this.db.prepare(`
        SELECT l.rev, l.key, l.created, l.deleted, l.prev_rev, l.value, p.value AS prev_value FROM kv_log l
        LEFT JOIN kv_log p ON p.rev = l.prev_rev AND p.deleted = 0
        WHERE l.rev > ? AND l.rev <= ? AND l.key >= ? AND l.key < ? ORDER BY l.rev LIMIT ?`),
      compactScan: this.db.prepare(
        'SELECT rev, prev_rev, deleted FROM kv_log WHERE rev > ? AND rev <= ? ORDER BY rev LIMIT ?',
      ),
      deleteRev: this.db.prepare('DELETE FROM kv_log WHERE rev = ?'),
    };
  }

  /** The persisted revision counters. */
  state(): EngineState {
    const meta = new Map(
      (
        this.db.prepare('SELECT name, value FROM kv_meta').all() as Array<{ name: string; value: number }>
      ).map((r) => [r.name, r.value]),
    );
    const maxRev = (this.db.prepare('SELECT MAX(rev) AS r FROM kv_log').get() as { r: number | null }).r ?? 0;
    this.revision = Math.max(meta.get('current_rev') ?? 0, maxRev);
    return {
      revision: this.revision,
      compactRev: meta.get('compact_rev') ?? 0,
      compactProgress: meta.get('compact_progress') ?? 0,
      retentionSamples: retentionSamplesIn(meta),
    };
  }

  // ------------------------------------------------------------------ reads

  /**
   * The key as of `revision`. On a reader connection the file may already hold commits newer
   * than the revision its store reports (the write thread commits before the store takes the
   * result in): reading at that revision never shows a write whose watch event is not out yet.
   * Compaction keeps the row a read at or above the compacted revision needs.
   */
  get(key: string, revision: number): KeyValue | undefined {
    const row = this.stmt.latestAt.get(key, revision);
    return row && !row.deleted ? toKeyValue(row) : undefined;
  }

  list(
    start: string,
    end: string,
    revision: number,
    limit: number,
  ): { items: KeyValue[]; remaining: number } {
    const rows = this.stmt.list.all(start, end, revision, limit);
    let remaining = 0;
    if (limit > 0 && rows.length === limit)
      remaining = this.stmt.count.get(rows[rows.length - 1].key + '\0', end, revision)?.n ?? 0;
    return { items: rows.map(toKeyValue), remaining };
  }

  history(after: number, upTo: number, start: string, end: string, limit: number): StorageEvent[] {
    return this.stmt.history.all(after, upTo, start, end, limit).map((row) => {
      const event: StorageEvent = {
        type: row.deleted ? 'delete' : 'put',
        key: row.key,
        value: row.value,
        revision: row.rev,
        createRevision: row.created,
      };
      if (!row.deleted && row.prev_value !== null) event.prevValue = row.prev_value;
      return event;
    });
  }

  // ------------------------------------------------------------------ writes

  /** Applies a batch in one transaction; throws (changing nothing) if the transaction fails. */
  commit(ops: WriteOp[]): { outcomes: Outcome[]; revision: number } {
    const start = this.revision;
    try {
      const outcomes = this.db
        .transaction(() => {
          const out = ops.map((op) => this.apply(op));
          if (this.revision !== start) this.stmt.setMeta.run('current_rev', this.revision);
          return out;
        })
        .immediate();
      return { outcomes, revision: this.revision };
    } catch (err) {
      this.revision = start;
      throw err;
    }
  }

  private apply(op: WriteOp): Outcome {
    const latest = this.stmt.latest.get(op.key);
    const live = latest && !latest.deleted ? latest : undefined;
    const conflict = (row: Row): Outcome => ({
      ok: false,
      code: 'Conflict',
      message: `${op.key} was modified (now at revision ${row.rev})`,
      current: toKeyValue(row),
    });
    switch (op.kind) {
      case 'create': {
        if (live)
          return {
            ok: false,
            code: 'KeyExists',
            message: `${op.key} already exists`,
            current: toKeyValue(live),
          };
        const rev = ++this.revision;
        this.stmt.insert.run(rev, op.key, rev, 0, latest?.rev ?? 0, op.value);
        return {
          ok: true,
          kv: { key: op.key, value: op.value, createRevision: rev, modRevision: rev },
          event: { type: 'put', key: op.key, value: op.value, revision: rev, createRevision: rev },
        };
      }
      case 'update': {
        if (!live) return { ok: false, code: 'NotFound', message: `${op.key} not found` };
        if (live.rev !== op.expected) return conflict(live);
        const rev = ++this.revision;
        this.stmt.insert.run(rev, op.key, live.created, 0, live.rev, op.value);
        return {
          ok: true,
          kv: { key: op.key, value: op.value, createRevision: live.created, modRevision: rev },
          event: {
            type: 'put',
            key: op.key,
            value: op.value,
            prevValue: live.value,
            revision: rev,
            createRevision: live.created,
          },
        };
      }
      case 'delete': {
        if (!live) return { ok: false, code: 'NotFound', message: `${op.key} not found` };
        if (op.expected !== undefined && live.rev !== op.expected) return conflict(live);
        const rev = ++this.revision;
        this.stmt.insert.run(rev, op.key, live.created, 1, live.rev, live.value);
        return {
          ok: true,
          kv: { key: op.key, value: live.value, createRevision: live.created, modRevision: rev },
          event: {
            type: 'delete',
            key: op.key,
            value: live.value,
            revision: rev,
            createRevision: live.created,
          },
        };
      }
    }
  }

  /** Sets the values together (one transaction). */
  setMeta(values: Record<string, number>): void {
    this.db.transaction(() => {
      for (const [name, value] of Object.entries(values)) this.stmt.setMeta.run(name, value);
    })();
  }

  /**
   * One small transaction of compaction: each row with a revision in (cursor, target] makes
   * its predecessor obsolete, and a tombstone in that range is obsolete itself.
   */
  compactChunk(cursor: number, target: number): { cursor: number; done: boolean } {
    return this.db
      .transaction(() => {
        const rows = this.stmt.compactScan.all(cursor, target, COMPACT_CHUNK);
        for (const r of rows) {
          if (r.prev_rev > 0) this.stmt.deleteRev.run(r.prev_rev);
          if (r.deleted) this.stmt.deleteRev.run(r.rev);
        }
        const done = rows.length < COMPACT_CHUNK;
        const next = done ? target : rows[rows.length - 1].rev;
        this.stmt.setMeta.run('compact_progress', next);
        return { cursor: next, done };
      })
      .immediate();
  }

  /**
   * After a compaction: give freed pages back once they are more than a quarter of the file
   * (down to a tenth of what is in use), and keep the WAL from growing. Fewer are kept for the
   * next writes: a store trimmed every
   * few seconds would otherwise shrink the file only to grow it again at once.
   */
  tidy(): void {
    const pages = this.db.pragma('page_count', { simple: true }) as number;
    const free = this.db.pragma('freelist_count', { simple: true }) as number;
    // At most 2000 pages (8 MiB) a round: the writes queued behind it wait for it.
    const keep = Math.floor((pages - free) / 10);
    if (free * 4 > pages) this.db.pragma(`incremental_vacuum(${Math.min(2000, free - keep)})`);
    this.db.pragma('wal_checkpoint(TRUNCATE)');
  }

  stats(): Stats {
    return {
      rows: (this.db.prepare('SELECT COUNT(*) AS n FROM kv_log').get() as { n: number }).n,
      pageCount: this.db.pragma('page_count', { simple: true }) as number,
      pageSize: this.db.pragma('page_size', { simple: true }) as number,
      freelist: this.db.pragma('freelist_count', { simple: true }) as number,
    };
  }

  close(): void {
    this.db.close();
  }
}

/** kv_meta holds integers: the samples are a count and numbered pairs (setMeta's values). */
export function retentionSamplesMeta(
  samples: ReadonlyArray<{ at: number; rev: number }>,
): Record<string, number> {
  const values: Record<string, number> = { retention_samples: samples.length };
  samples.forEach((s, i) => {
    values[`retention_sample_${i}_at`] = s.at;
    values[`retention_sample_${i}_rev`] = s.rev;
  });
  return values;
}

function retentionSamplesIn(meta: Map<string, number>): Array<{ at: number; rev: number }> {
  const count = meta.get('retention_samples');
  if (count === undefined) {
    // A file written before samples were kept has the oldest one only.
    const at = meta.get('retention_mark_at');
    return at === undefined ? [] : [{ at, rev: meta.get('retention_mark_rev') ?? 0 }];
  }
  const samples: Array<{ at: number; rev: number }> = [];
  for (let i = 0; i < Math.min(count, PERSISTED_SAMPLES); i++) {
    const at = meta.get(`retention_sample_${i}_at`);
    const rev = meta.get(`retention_sample_${i}_rev`);
    if (at !== undefined && rev !== undefined) samples.push({ at, rev });
  }
  return samples;
}

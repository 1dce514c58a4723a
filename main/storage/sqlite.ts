/**
 * The embedded default backend: one SQLite file (better-sqlite3, WAL) holding a kine-style
 * revision log. Every write appends a row whose primary key is the new revision; the latest
 * row of a key is its current state (a tombstone row marks a delete). Writes are grouped into
 * one transaction per event-loop turn (group commit) and each caller is acknowledged only
 * after that transaction commits, so durability (synchronous=FULL) costs one fsync per batch.
 *
 * better-sqlite3 is synchronous, and in the desktop app the same event loop serves the GUI:
 * batches are capped, history replay and compaction run in small chunks between turns.
 */
import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import {
  prefixEnd,
  StorageError,
  type KeyValue,
  type ListOptions,
  type ListResult,
  type Storage,
  type StorageEvent,
  type WatchCallbacks,
  type WatchHandle,
} from './types.js';

export interface SqliteStorageOptions {
  /** The database file, or ':memory:'. */
  path: string;
  /** History kept for watchers that resume (default 5 minutes). */
  retentionMs?: number;
  /** How often compaction runs (default 60 s; 0 disables the timer). */
  compactIntervalMs?: number;
  /** Writes per transaction at most (default 2000). */
  maxBatch?: number;
  /** The clock behind retention; tests move it. */
  now?: () => number;
}

interface Row {
  rev: number;
  key: string;
  created: number;
  deleted: number;
  prev_rev: number;
  value: string;
}

type WriteOp =
  | { kind: 'create'; key: string; value: string }
  | { kind: 'update'; key: string; value: string; expected: number }
  | { kind: 'delete'; key: string; expected?: number };

interface PendingWrite {
  op: WriteOp;
  resolve(kv: KeyValue): void;
  reject(err: Error): void;
}

type Outcome = { ok: true; kv: KeyValue; event: StorageEvent } | { ok: false; err: StorageError };

const REPLAY_CHUNK = 2000;
const COMPACT_CHUNK = 1000;

class SqliteWatcher {
  private queue: StorageEvent[] = [];
  private scheduled = false;
  /** Live events newer than this are held until the replay has caught up. */
  catchingUpTo = 0;
  private held: StorageEvent[] = [];
  cancelled = false;

  constructor(
    readonly prefix: string,
    readonly end: string,
    private readonly callbacks: WatchCallbacks,
  ) {}

  matches(key: string): boolean {
    return key >= this.prefix && key < this.end;
  }

  offerLive(events: StorageEvent[]): void {
    if (this.catchingUpTo > 0) this.held.push(...events);
    else this.push(events);
  }

  finishReplay(): void {
    this.catchingUpTo = 0;
    const held = this.held;
    this.held = [];
    this.push(held);
  }

  push(events: StorageEvent[]): void {
    if (events.length === 0 || this.cancelled) return;
    for (const e of events) this.queue.push(e);
    if (!this.scheduled) {
      this.scheduled = true;
      // Delivered on the next turn, never inside the writer's call stack.
      queueMicrotask(() => this.flush());
    }
  }

  private flush(): void {
    this.scheduled = false;
    if (this.cancelled) return;
    const batch = this.queue;
    this.queue = [];
    if (batch.length) this.callbacks.onEvents(batch);
  }

  fail(err: StorageError): void {
    if (this.cancelled) return;
    this.cancelled = true;
    queueMicrotask(() => this.callbacks.onError(err));
  }
}

export class SqliteStorage implements Storage {
  readonly backend = 'sqlite' as const;
  private readonly db: Database.Database;
  private revision: number;
  private compactRev: number;
  private pending: PendingWrite[] = [];
  private flushScheduled = false;
  private closed = false;
  private readonly watchers = new Set<SqliteWatcher>();
  private readonly maxBatch: number;
  private readonly now: () => number;
  private readonly retentionMs: number;
  private compactTimer: NodeJS.Timeout | undefined;
  private compacting: Promise<void> = Promise.resolve();
  /** (time, revision) samples: compaction keeps everything newer than `retentionMs`. */
  private readonly samples: Array<{ at: number; rev: number }> = [];

  private readonly stmt: {
    latest: Database.Statement<[string], Row>;
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
    keyHistory: Database.Statement<[string], Row>;
  };

  constructor(options: SqliteStorageOptions) {
    if (options.path !== ':memory:') mkdirSync(dirname(options.path), { recursive: true });
    this.maxBatch = options.maxBatch ?? 2000;
    this.now = options.now ?? Date.now;
    this.retentionMs = options.retentionMs ?? 5 * 60_000;
    try {
      // Fail fast when another process holds the file instead of waiting for it.
      this.db = new Database(options.path, { timeout: 250 });
      // auto_vacuum must be chosen before the first table exists.
      this.db.pragma('auto_vacuum = INCREMENTAL');
      this.db.pragma('journal_mode = WAL');
      this.db.pragma('synchronous = FULL');
      // One process owns the file: a second server on the same data folder fails at open.
      this.db.pragma('locking_mode = EXCLUSIVE');
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
    } catch (err) {
      const msg = (err as Error).message;
      if (/locked|busy/i.test(msg)) {
        throw new StorageError(
          'Unavailable',
          `the database ${options.path} is in use by another kubelab server; stop it or choose another --data-dir`,
        );
      }
      throw new StorageError('Unavailable', `cannot open the database ${options.path}: ${msg}`);
    }

    this.stmt = {
      latest: this.db.prepare(
        'SELECT rev, key, created, deleted, prev_rev, value FROM kv_log WHERE key = ? ORDER BY rev DESC LIMIT 1',
      ),
      insert: this.db.prepare(
        'INSERT INTO kv_log (rev, key, created, deleted, prev_rev, value) VALUES (?, ?, ?, ?, ?, ?)',
      ),
      setMeta: this.db.prepare(
        'INSERT INTO kv_meta (name, value) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET value = excluded.value',
      ),
      list: this.db.prepare(`
        SELECT l.rev, l.key, l.created, l.deleted, l.prev_rev, l.value FROM kv_log l
        JOIN (SELECT key, MAX(rev) AS mrev FROM kv_log WHERE key >= ? AND key < ? AND rev <= ? GROUP BY key) m
          ON l.rev = m.mrev
        WHERE l.deleted = 0 ORDER BY l.key LIMIT ?`),
      count: this.db.prepare(`
        SELECT COUNT(*) AS n FROM kv_log l
        JOIN (SELECT key, MAX(rev) AS mrev FROM kv_log WHERE key >= ? AND key < ? AND rev <= ? GROUP BY key) m
          ON l.rev = m.mrev
        WHERE l.deleted = 0`),
      history: this.db.prepare(`
        SELECT l.rev, l.key, l.created, l.deleted, l.prev_rev, l.value, p.value AS prev_value FROM kv_log l
        LEFT JOIN kv_log p ON p.rev = l.prev_rev AND p.deleted = 0
        WHERE l.rev > ? AND l.rev <= ? AND l.key >= ? AND l.key < ? ORDER BY l.rev LIMIT ?`),
      compactScan: this.db.prepare(
        'SELECT rev, prev_rev, deleted FROM kv_log WHERE rev > ? AND rev <= ? ORDER BY rev LIMIT ?',
      ),
      deleteRev: this.db.prepare('DELETE FROM kv_log WHERE rev = ?'),
      keyHistory: this.db.prepare(
        'SELECT rev, key, created, deleted, prev_rev, value FROM kv_log WHERE key = ? AND deleted = 0 ORDER BY rev',
      ),
    };

    const meta = new Map(
      (
        this.db.prepare('SELECT name, value FROM kv_meta').all() as Array<{ name: string; value: number }>
      ).map((r) => [r.name, r.value]),
    );
    const maxRev = (this.db.prepare('SELECT MAX(rev) AS r FROM kv_log').get() as { r: number | null }).r ?? 0;
    this.revision = Math.max(meta.get('current_rev') ?? 0, maxRev);
    this.compactRev = meta.get('compact_rev') ?? 0;
    this.samples.push({ at: this.now(), rev: this.revision });

    // A compaction interrupted by a crash resumes where it stopped.
    const progress = meta.get('compact_progress') ?? 0;
    if (progress < this.compactRev) this.compacting = this.runCompaction(progress, this.compactRev);

    const interval = options.compactIntervalMs ?? 60_000;
    if (interval > 0) {
      this.compactTimer = setInterval(() => this.compactOnTimer(), interval);
      this.compactTimer.unref();
    }
  }

  // ------------------------------------------------------------------ reads

  async get(key: string): Promise<KeyValue | undefined> {
    this.assertOpen();
    const row = this.stmt.latest.get(key);
    return row && !row.deleted ? toKeyValue(row) : undefined;
  }

  async list(prefix: string, options: ListOptions = {}): Promise<ListResult> {
    this.assertOpen();
    const revision = options.revision && options.revision > 0 ? options.revision : this.revision;
    this.assertAvailable(revision);
    if (revision > this.revision) {
      throw new StorageError(
        'Unavailable',
        `revision ${revision} is newer than the store's current revision ${this.revision}`,
        {
          requestedRevision: revision,
        },
      );
    }
    const start = options.startKey && options.startKey > prefix ? options.startKey : prefix;
    const end = prefixEnd(prefix);
    const limit = options.limit && options.limit > 0 ? options.limit : -1;
    const rows = this.stmt.list.all(start, end, revision, limit);
    let remaining = 0;
    if (limit > 0 && rows.length === limit) {
      const last = rows[rows.length - 1].key;
      remaining = this.stmt.count.get(last + '\0', end, revision)?.n ?? 0;
    }
    return { items: rows.map(toKeyValue), revision, remaining };
  }

  async keyHistory(key: string): Promise<KeyValue[]> {
    this.assertOpen();
    return this.stmt.keyHistory.all(key).map(toKeyValue);
  }

  async currentRevision(): Promise<number> {
    return this.revision;
  }

  async compactedRevision(): Promise<number> {
    return this.compactRev;
  }

  // ------------------------------------------------------------------ writes (group commit)

  create(key: string, value: string): Promise<KeyValue> {
    return this.enqueue({ kind: 'create', key, value });
  }

  update(key: string, value: string, expectedRevision: number): Promise<KeyValue> {
    return this.enqueue({ kind: 'update', key, value, expected: expectedRevision });
  }

  delete(key: string, expectedRevision?: number): Promise<KeyValue> {
    return this.enqueue({ kind: 'delete', key, expected: expectedRevision });
  }

  private enqueue(op: WriteOp): Promise<KeyValue> {
    if (this.closed) return Promise.reject(new StorageError('Unavailable', 'the store is closed'));
    return new Promise((resolve, reject) => {
      this.pending.push({ op, resolve, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Commits up to `maxBatch` pending writes in one transaction, then acknowledges them. */
  private flush(): void {
    this.flushScheduled = false;
    if (this.pending.length === 0) return;
    const batch = this.pending.splice(0, this.maxBatch);
    const startRevision = this.revision;
    let outcomes: Outcome[];
    try {
      outcomes = this.db
        .transaction(() => {
          const out = batch.map((w) => this.apply(w.op));
          if (this.revision !== startRevision) this.stmt.setMeta.run('current_rev', this.revision);
          return out;
        })
        .immediate();
    } catch (err) {
      this.revision = startRevision;
      const failure = new StorageError(
        'Unavailable',
        `the database write failed: ${(err as Error).message}; check free disk space and file permissions`,
      );
      for (const w of batch) w.reject(failure);
      this.scheduleMore();
      return;
    }

    const events: StorageEvent[] = [];
    for (const o of outcomes) if (o.ok) events.push(o.event);
    if (events.length) this.publish(events);
    batch.forEach((w, i) => {
      const o = outcomes[i];
      if (o.ok) w.resolve(o.kv);
      else w.reject(o.err);
    });
    this.scheduleMore();
  }

  private scheduleMore(): void {
    if (this.pending.length && !this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => this.flush());
    }
  }

  private apply(op: WriteOp): Outcome {
    const latest = this.stmt.latest.get(op.key);
    const live = latest && !latest.deleted ? latest : undefined;
    switch (op.kind) {
      case 'create': {
        if (live)
          return {
            ok: false,
            err: new StorageError('KeyExists', `${op.key} already exists`, {
              key: op.key,
              current: toKeyValue(live),
            }),
          };
        const rev = ++this.revision;
        this.stmt.insert.run(rev, op.key, rev, 0, latest?.rev ?? 0, op.value);
        const kv = { key: op.key, value: op.value, createRevision: rev, modRevision: rev };
        return {
          ok: true,
          kv,
          event: { type: 'put', key: op.key, value: op.value, revision: rev, createRevision: rev },
        };
      }
      case 'update': {
        if (!live)
          return { ok: false, err: new StorageError('NotFound', `${op.key} not found`, { key: op.key }) };
        if (live.rev !== op.expected) return { ok: false, err: conflict(op.key, live) };
        const rev = ++this.revision;
        this.stmt.insert.run(rev, op.key, live.created, 0, live.rev, op.value);
        const kv = { key: op.key, value: op.value, createRevision: live.created, modRevision: rev };
        return {
          ok: true,
          kv,
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
        if (!live)
          return { ok: false, err: new StorageError('NotFound', `${op.key} not found`, { key: op.key }) };
        if (op.expected !== undefined && live.rev !== op.expected)
          return { ok: false, err: conflict(op.key, live) };
        const rev = ++this.revision;
        this.stmt.insert.run(rev, op.key, live.created, 1, live.rev, live.value);
        const kv = { key: op.key, value: live.value, createRevision: live.created, modRevision: rev };
        return {
          ok: true,
          kv,
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

  // ------------------------------------------------------------------ watch

  private publish(events: StorageEvent[]): void {
    for (const w of this.watchers) {
      let mine: StorageEvent[] | undefined;
      for (const e of events) {
        if (w.matches(e.key)) (mine ??= []).push(e);
      }
      if (mine) w.offerLive(mine);
    }
  }

  watch(prefix: string, fromRevision: number, callbacks: WatchCallbacks): WatchHandle {
    const watcher = new SqliteWatcher(prefix, prefixEnd(prefix), callbacks);
    const handle = {
      cancel: () => {
        watcher.cancelled = true;
        this.watchers.delete(watcher);
      },
    };
    if (this.closed) {
      watcher.fail(new StorageError('Unavailable', 'the store is closed'));
      return handle;
    }
    if (fromRevision < this.compactRev) {
      watcher.fail(compacted(fromRevision, this.compactRev));
      return handle;
    }
    this.watchers.add(watcher);
    if (fromRevision < this.revision) {
      // Replay the history in chunks; live events wait behind it, so nothing is reordered,
      // lost or repeated.
      watcher.catchingUpTo = this.revision;
      this.replay(watcher, fromRevision);
    }
    return handle;
  }

  private replay(watcher: SqliteWatcher, after: number): void {
    if (watcher.cancelled || this.closed) return;
    if (after < this.compactRev) {
      // Compaction overtook a slow replay: the watcher cannot be served without a gap.
      this.watchers.delete(watcher);
      watcher.fail(compacted(after, this.compactRev));
      return;
    }
    const rows = this.stmt.history.all(
      after,
      watcher.catchingUpTo,
      watcher.prefix,
      watcher.end,
      REPLAY_CHUNK,
    );
    watcher.push(rows.map(rowToEvent));
    if (rows.length === REPLAY_CHUNK) {
      const next = rows[rows.length - 1].rev;
      setImmediate(() => this.replay(watcher, next));
    } else {
      watcher.finishReplay();
    }
  }

  // ------------------------------------------------------------------ compaction

  async compact(revision: number): Promise<void> {
    this.assertOpen();
    await this.compacting;
    const target = Math.min(revision, this.revision);
    if (target <= this.compactRev) return;
    const from = this.compactRev;
    // Readers see the new floor before any row disappears.
    this.compactRev = target;
    this.stmt.setMeta.run('compact_rev', target);
    this.compacting = this.runCompaction(from, target);
    await this.compacting;
  }

  /**
   * Removes rows superseded at or before `target` in small transactions: each row whose
   * revision is in (from, target] makes its predecessor obsolete, and a tombstone in that
   * range is obsolete itself. Writers run between the chunks.
   */
  private async runCompaction(from: number, target: number): Promise<void> {
    let cursor = from;
    while (!this.closed) {
      const done = this.db
        .transaction(() => {
          const rows = this.stmt.compactScan.all(cursor, target, COMPACT_CHUNK);
          for (const r of rows) {
            if (r.prev_rev > 0) this.stmt.deleteRev.run(r.prev_rev);
            if (r.deleted) this.stmt.deleteRev.run(r.rev);
          }
          cursor = rows.length ? rows[rows.length - 1].rev : target;
          this.stmt.setMeta.run('compact_progress', rows.length < COMPACT_CHUNK ? target : cursor);
          return rows.length < COMPACT_CHUNK;
        })
        .immediate();
      if (done) break;
      await new Promise((r) => setImmediate(r));
    }
    if (this.closed) return;
    // Give the freed pages back and keep the WAL from growing without bound.
    this.db.pragma('incremental_vacuum(2000)');
    this.db.pragma('wal_checkpoint(TRUNCATE)');
  }

  private compactOnTimer(): void {
    const now = this.now();
    this.samples.push({ at: now, rev: this.revision });
    let target = 0;
    while (this.samples.length > 1 && this.samples[0].at <= now - this.retentionMs) {
      target = this.samples.shift()!.rev;
    }
    if (target > this.compactRev) {
      this.compact(target).catch(() => {
        // A failed compaction is retried on the next tick; the log only grows meanwhile.
      });
    }
  }

  // ------------------------------------------------------------------ lifecycle

  async close(): Promise<void> {
    if (this.closed) return;
    // Acknowledge every write already accepted before the file is closed.
    while (this.pending.length) this.flush();
    this.closed = true;
    if (this.compactTimer) clearInterval(this.compactTimer);
    await this.compacting.catch(() => undefined);
    for (const w of this.watchers) w.cancelled = true;
    this.watchers.clear();
    this.db.close();
  }

  /** Size of the database file and its WAL, for metrics and the churn test. */
  stats(): { rows: number; pageCount: number; pageSize: number; freelist: number } {
    const rows = (this.db.prepare('SELECT COUNT(*) AS n FROM kv_log').get() as { n: number }).n;
    return {
      rows,
      pageCount: this.db.pragma('page_count', { simple: true }) as number,
      pageSize: this.db.pragma('page_size', { simple: true }) as number,
      freelist: this.db.pragma('freelist_count', { simple: true }) as number,
    };
  }

  private assertOpen(): void {
    if (this.closed) throw new StorageError('Unavailable', 'the store is closed');
  }

  private assertAvailable(revision: number): void {
    if (revision < this.compactRev) throw compacted(revision, this.compactRev);
  }
}

function toKeyValue(row: Row): KeyValue {
  return { key: row.key, value: row.value, createRevision: row.created, modRevision: row.rev };
}

function rowToEvent(row: Row & { prev_value: string | null }): StorageEvent {
  const event: StorageEvent = {
    type: row.deleted ? 'delete' : 'put',
    key: row.key,
    value: row.value,
    revision: row.rev,
    createRevision: row.created,
  };
  if (!row.deleted && row.prev_value !== null) event.prevValue = row.prev_value;
  return event;
}

function conflict(key: string, live: Row): StorageError {
  return new StorageError('Conflict', `${key} was modified (now at revision ${live.rev})`, {
    key,
    current: toKeyValue(live),
  });
}

function compacted(requested: number, compactedRevision: number): StorageError {
  return new StorageError(
    'Compacted',
    `revision ${requested} has been compacted (the oldest available is ${compactedRevision}); list again to get a current revision`,
    { requestedRevision: requested, compactedRevision },
  );
}

export function openSqliteStorage(options: SqliteStorageOptions): SqliteStorage {
  return new SqliteStorage(options);
}

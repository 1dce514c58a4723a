/**
 * The embedded default backend: one SQLite file (better-sqlite3, WAL) holding a kine-style
 * revision log (see sqlite-engine.ts). Writes are grouped (group commit): while one batch is
 * being committed — in a worker thread, so its fsync never blocks the event loop — the next
 * batch fills; each caller is acknowledged only after its batch committed. Reads use a
 * connection of their own on this thread, at the revision this thread has taken in: the file
 * can be ahead of it (a commit whose answer from the write thread is not processed yet), and a
 * read must never show a write that `currentRevision()`, lists and watches do not show yet.
 * In-memory stores (NodeMetrics) run inline.
 *
 * History replay and compaction run in small chunks, so neither blocks writers or the GUI.
 * A compaction that fails (a full disk, a locked file) is logged and resumed by the next tick.
 */
import { chmodSync, closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { Worker } from 'node:worker_threads';
import { nextTurn } from '../../client/util/nextturn.js';
import { createLogger, type Logger } from '../logging.js';
import { takeLock } from './lockfile.js';
import {
  boundedHistoryTarget,
  samplesToPersist,
  usableSamples,
  DEFAULT_HISTORY_BOUND,
  type HistoryBound,
  type RetentionSample,
} from './retention.js';
import {
  retentionSamplesMeta,
  SqliteEngine,
  type EngineState,
  type Outcome,
  type Stats,
  type WriteOp,
} from './sqlite-engine.js';
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
  /** Under heavy writing, less is kept (retention.ts; default DEFAULT_HISTORY_BOUND). */
  historyBound?: HistoryBound;
  /**
   * How often compaction runs and the revision is sampled (default 15 s: under heavy writing
   * the bound keeps history near the last 75 s, which needs samples finer than that; a tick
   * with nothing due costs nothing; 0 disables the timer).
   */
  compactIntervalMs?: number;
  /** Writes per transaction at most (default 2000). */
  maxBatch?: number;
  /**
   * Keys whose writes go to the front of the next batch (the nodes' heartbeats: their Lease
   * and Node). Under a flood of other writes — a fleet starting its pods, the controllers
   * creating them — a renewal waited in line behind thousands of them, holding its seat in the
   * apiserver's node-high level while it did, until renewals missed the grace period. They
   * take at most half of a batch while other writes wait.
   */
  firstInLine?: (key: string) => boolean;
  /** The clock behind retention; tests move it. */
  now?: () => number;
  /** Commit in this thread even for a file (default: a worker thread for files). */
  inline?: boolean;
  /** Where failed compactions are reported (default: a logger on stderr, made when needed). */
  logger?: Logger;
}

/** What the write thread answers for a batch: each write's outcome, and the revision after it. */
interface CommitResult {
  outcomes: Outcome[];
  revision: number;
}

/** Where writes go: the engine itself (inline) or the worker holding the write connection. */
interface Writer {
  commit(ops: WriteOp[]): Promise<CommitResult>;
  setMeta(values: Record<string, number>): Promise<void>;
  compactChunk(cursor: number, target: number): Promise<{ cursor: number; done: boolean }>;
  tidy(): Promise<void>;
  stats(): Promise<Stats>;
  close(): Promise<void>;
}

function inlineWriter(engine: SqliteEngine): Writer {
  return {
    commit: async (ops) => engine.commit(ops),
    setMeta: async (values) => engine.setMeta(values),
    compactChunk: async (c, t) => engine.compactChunk(c, t),
    tidy: async () => engine.tidy(),
    stats: async () => engine.stats(),
    close: async () => engine.close(),
  };
}

/**
 * Starts the write worker; TypeScript sources (tests, tsx) load through tsx inside it. tsx is
 * resolved here, from this file: the eval'd worker would look for it from the current folder,
 * and `npx kubelab server` runs wherever its user is.
 */
function spawnWriter(path: string): Promise<{ writer: Writer; state: EngineState }> {
  const self = import.meta.url;
  const worker = self.endsWith('.ts')
    ? new Worker(
        `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then(({ register }) => { register(); return import(${JSON.stringify(new URL('./sqlite-worker.ts', self).href)}); })`,
        { eval: true, workerData: { path, durable: true } },
      )
    : new Worker(new URL('./sqlite-worker.js', self), { workerData: { path, durable: true } });
  let nextId = 1;
  const waiting = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  let failed: Error | undefined;
  const failAll = (err: Error) => {
    failed = err;
    for (const w of waiting.values()) w.reject(err);
    waiting.clear();
  };
  const call = <T>(method: string, ...args: unknown[]): Promise<T> => {
    if (failed) return Promise.reject(failed);
    const id = nextId++;
    return new Promise<T>((resolve, reject) => {
      waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
      worker.postMessage({ id, method, args });
    });
  };
  return new Promise((resolve, reject) => {
    worker.once('error', (err) => reject(err));
    worker.once('message', (first: { ready: boolean; state?: EngineState; error?: string }) => {
      if (!first.ready) {
        reject(new Error(first.error));
        return;
      }
      worker.on('message', (m: { id: number; ok: boolean; result?: unknown; error?: string }) => {
        const w = waiting.get(m.id);
        waiting.delete(m.id);
        if (m.ok) w?.resolve(m.result);
        else w?.reject(new Error(m.error));
      });
      worker.on('error', (err) => failAll(new Error(`the store's write thread failed: ${err.message}`)));
      worker.on('exit', () => failAll(new Error('the store is closed')));
      resolve({
        state: first.state!,
        writer: {
          commit: (ops) => call('commit', ops),
          setMeta: (values) => call('setMeta', values),
          compactChunk: (c, t) => call('compactChunk', c, t),
          tidy: () => call('tidy'),
          stats: () => call('stats'),
          close: async () => {
            await call('close').catch(() => undefined);
            await worker.terminate();
          },
        },
      });
    });
  });
}

const REPLAY_CHUNK = 2000;

/**
 * The database and its WAL and shared-memory files are the owner's only (0600), whatever the
 * umask or the folder's mode: SQLite gives -wal and -shm the database file's own mode when it
 * creates them, so the database file is made 0600 before SQLite opens it, and files an
 * earlier version left with a wider mode are narrowed.
 */
function keepPrivate(path: string): void {
  closeSync(openSync(path, 'a', 0o600));
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    try {
      chmodSync(file, 0o600);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
}

/** Writes of a committed batch acknowledged (and published) per turn of the event loop. */
const DELIVERY_CHUNK = 64;

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

interface PendingWrite {
  op: WriteOp;
  resolve(kv: KeyValue): void;
  reject(err: Error): void;
}

export class SqliteStorage implements Storage {
  readonly backend = 'sqlite' as const;
  private revision: number;
  private compactRev: number;
  private pending: PendingWrite[] = [];
  /** Writes of `firstInLine` keys, committed before `pending`. */
  private urgent: PendingWrite[] = [];
  private readonly firstInLine: ((key: string) => boolean) | undefined;
  private flushScheduled = false;
  private committing: Promise<void> | undefined;
  /** Committed batches being handed out, in commit order. */
  private delivering: Promise<void> = Promise.resolve();
  private closed = false;
  private readonly watchers = new Set<SqliteWatcher>();
  private readonly maxBatch: number;
  private readonly now: () => number;
  private readonly retentionMs: number;
  private readonly historyBound: HistoryBound;
  private compactTimer: NodeJS.Timeout | undefined;
  /** The last compaction round, settled or not: rounds run one after another. */
  private compacting: Promise<void> = Promise.resolve();
  /**
   * Superseded rows at or below this revision are gone. It trails `compactRev` while a round
   * runs, and after a round failed: the next round resumes from here, so no range is skipped.
   */
  private compactProgress: number;
  /** The compacted revision the file records (a crash resumes the compaction up to it). */
  private compactRevPersisted: number;
  /** Rows were dropped and the freed pages and the WAL are still to be given back. */
  private tidyPending = false;
  private logger: Logger | undefined;
  /**
   * (time, revision) samples: compaction keeps everything newer than `retentionMs`, and under
   * heavy writing the last `historyBound.minRetentionMs`. They are kept in the file, so that a
   * store opened and closed more often than either (a desktop app, a restart under load)
   * compacts on schedule instead of counting again from its start.
   */
  private samples: RetentionSample[] = [];
  /** The samples as the file has them (or as they are being written). */
  private samplesWritten: readonly RetentionSample[] = [];
  private samplesWrite: Promise<void> = Promise.resolve();

  private constructor(
    options: SqliteStorageOptions,
    private readonly reader: SqliteEngine,
    private readonly writer: Writer,
    state: EngineState,
    private readonly unlock: () => void,
  ) {
    this.maxBatch = options.maxBatch ?? 2000;
    this.firstInLine = options.firstInLine;
    this.now = options.now ?? Date.now;
    this.retentionMs = options.retentionMs ?? 5 * 60_000;
    this.historyBound = options.historyBound ?? DEFAULT_HISTORY_BOUND;
    this.revision = state.revision;
    this.compactRev = state.compactRev;
    this.compactRevPersisted = state.compactRev;
    this.compactProgress = Math.min(state.compactProgress, state.compactRev);
    this.logger = options.logger;
    const now = this.now();
    // The windows counted before the last close go on; samples from a clock set back, or that
    // a compaction has passed, say nothing.
    this.samples = usableSamples(state.retentionSamples, now, this.compactRev, this.revision);
    this.samplesWritten = [...this.samples];
    this.samples.push({ at: now, rev: this.revision });
    // A compaction interrupted by a crash resumes where it stopped (and, should that fail,
    // on the next tick).
    if (this.compactProgress < this.compactRev)
      void this.compactRound(this.compactRev).catch((err: unknown) =>
        this.compactionFailed(err, this.compactRev),
      );
    const interval = options.compactIntervalMs ?? 15_000;
    if (interval > 0) {
      this.compactTimer = setInterval(() => this.compactOnTimer(), interval);
      this.compactTimer.unref();
      // A window that ended while the store was closed is compacted now, not a tick later.
      void this.compactDue();
    }
  }

  static async open(options: SqliteStorageOptions): Promise<SqliteStorage> {
    const onDisk = options.path !== ':memory:';
    if (onDisk) mkdirSync(dirname(options.path), { recursive: true, mode: 0o700 });
    if (!onDisk || options.inline) {
      if (onDisk) keepPrivate(options.path);
      const engine = openEngine(options.path, true, onDisk);
      return new SqliteStorage(options, engine, inlineWriter(engine), engine.state(), () => undefined);
    }
    const unlock = takeLock(options.path);
    let spawned: { writer: Writer; state: EngineState };
    try {
      keepPrivate(options.path);
      spawned = await spawnWriter(options.path);
    } catch (err) {
      unlock();
      throw new StorageError(
        'Unavailable',
        `cannot open the database ${options.path}: ${(err as Error).message}`,
      );
    }
    try {
      return new SqliteStorage(
        options,
        openEngine(options.path, false, true),
        spawned.writer,
        spawned.state,
        unlock,
      );
    } catch (err) {
      await spawned.writer.close();
      unlock();
      throw err;
    }
  }

  // ------------------------------------------------------------------ reads

  async get(key: string): Promise<KeyValue | undefined> {
    this.assertOpen();
    return this.reader.get(key, this.revision);
  }

  async list(prefix: string, options: ListOptions = {}): Promise<ListResult> {
    this.assertOpen();
    const revision = options.revision && options.revision > 0 ? options.revision : this.revision;
    this.assertAvailable(revision);
    if (revision > this.revision) {
      throw new StorageError(
        'Unavailable',
        `revision ${revision} is newer than the store's current revision ${this.revision}`,
        { requestedRevision: revision },
      );
    }
    const start = options.startKey && options.startKey > prefix ? options.startKey : prefix;
    const limit = options.limit && options.limit > 0 ? options.limit : -1;
    return { ...this.reader.list(start, prefixEnd(prefix), revision, limit), revision };
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
      (this.firstInLine?.(op.key) ? this.urgent : this.pending).push({ op, resolve, reject });
      if (!this.flushScheduled && !this.committing) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /**
   * Commits the pending writes as one batch. The next batch is committed as soon as the write
   * thread has answered for this one, while this one is still being handed out; hand-outs keep
   * the commit order.
   */
  private flush(): void {
    this.flushScheduled = false;
    if (this.committing || this.pending.length + this.urgent.length === 0) return;
    const urgentRoom = this.pending.length ? Math.ceil(this.maxBatch / 2) : this.maxBatch;
    const batch = this.urgent.splice(0, urgentRoom);
    batch.push(...this.pending.splice(0, this.maxBatch - batch.length));
    const committed = this.writer.commit(batch.map((w) => w.op));
    this.delivering = this.delivering.then(() =>
      committed.then(
        (result) => this.deliver(batch, result),
        (err: Error) => {
          const failure = new StorageError(
            'Unavailable',
            `the database write failed: ${err.message}; check free disk space and file permissions`,
          );
          for (const w of batch) w.reject(failure);
        },
      ),
    );
    this.committing = committed.then(
      () => undefined,
      () => undefined,
    );
    void this.committing.finally(() => {
      this.committing = undefined;
      // Writes that arrived during the commit form the next batch at once.
      if (this.pending.length || this.urgent.length) this.flush();
    });
  }

  /**
   * Hands a committed batch out a chunk per turn of the event loop: a batch of thousands, with
   * every watcher's and writer's follow-up work, would otherwise hold the loop for seconds
   * (timers, leases and the GUI wait behind it). The store's revision advances with what has
   * been handed out, so reads and new watches never run ahead of the watchers.
   */
  private async deliver(batch: PendingWrite[], { outcomes, revision }: CommitResult): Promise<void> {
    // The write thread sends back no values for puts: they are the ones we sent.
    outcomes.forEach((o, i) => {
      const op = batch[i].op;
      if (o.ok && o.event.type === 'put' && op.kind !== 'delete') o.kv.value = o.event.value = op.value;
    });
    for (let from = 0; from < batch.length; from += DELIVERY_CHUNK) {
      if (from > 0) await new Promise<void>((r) => setImmediate(r));
      const to = Math.min(batch.length, from + DELIVERY_CHUNK);
      const events: StorageEvent[] = [];
      for (let i = from; i < to; i++) {
        const o = outcomes[i];
        if (o.ok) events.push(o.event);
      }
      if (events.length) this.revision = events[events.length - 1].revision;
      // Watchers (the watch cache) see a write before its writer is acknowledged.
      if (events.length) this.publish(events);
      for (let i = from; i < to; i++) {
        const o = outcomes[i];
        const w = batch[i];
        if (o.ok) w.resolve(o.kv);
        else w.reject(new StorageError(o.code, o.message, { key: w.op.key, current: o.current }));
      }
    }
    this.revision = Math.max(this.revision, revision);
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
    const events = this.reader.history(
      after,
      watcher.catchingUpTo,
      watcher.prefix,
      watcher.end,
      REPLAY_CHUNK,
    );
    watcher.push(events);
    if (events.length === REPLAY_CHUNK) {
      const next = events[events.length - 1].revision;
      setImmediate(() => this.replay(watcher, next));
    } else {
      watcher.finishReplay();
    }
  }

  // ------------------------------------------------------------------ compaction

  /** Rejects when the round fails; the work left is resumed by the next round (or tick). */
  compact(revision: number): Promise<void> {
    this.assertOpen();
    return this.compactRound(revision);
  }

  /** Queues a round behind the one running: two rounds never delete rows side by side. */
  private compactRound(revision: number): Promise<void> {
    // A failed round is no reason to refuse this one: this one resumes its work.
    const round = this.compacting.catch(() => undefined).then(() => this.runCompaction(revision));
    this.compacting = round;
    return round;
  }

  /** Removes superseded rows up to the target in small transactions; writers run between them. */
  private async runCompaction(revision: number): Promise<void> {
    if (this.closed) return;
    const target = Math.min(revision, this.revision);
    // Readers see the new floor before any row disappears.
    if (target > this.compactRev) this.compactRev = target;
    if (this.compactRevPersisted < this.compactRev) {
      // Recorded before any row goes, so a restart never offers a revision it no longer has.
      const floor = this.compactRev;
      await this.writer.setMeta({ compact_rev: floor });
      this.compactRevPersisted = Math.max(this.compactRevPersisted, floor);
    }
    while (!this.closed && this.compactProgress < this.compactRevPersisted) {
      const chunk = await this.writer.compactChunk(this.compactProgress, this.compactRevPersisted);
      this.compactProgress = chunk.cursor;
      this.tidyPending = true;
      if (chunk.done) break;
      await nextTurn();
    }
    if (!this.closed && this.tidyPending) {
      await this.writer.tidy();
      this.tidyPending = false;
    }
  }

  /** Settles when the round has ended, failed or not (tests await it). */
  private compactOnTimer(): Promise<void> {
    this.samples.push({ at: this.now(), rev: this.revision });
    return this.compactDue();
  }

  /** Compacts what is older than the retention; settles when the round has ended. */
  private compactDue(): Promise<void> {
    const now = this.now();
    let target = 0;
    while (this.samples.length > 1 && this.samples[0].at <= now - this.retentionMs) {
      target = this.samples.shift()!.rev;
    }
    const bounded = boundedHistoryTarget(
      this.samples,
      now,
      this.revision,
      Math.max(target, this.compactRev),
      this.historyBound,
    );
    if (bounded > target) {
      target = bounded;
      while (this.samples.length > 1 && this.samples[0].rev <= target) this.samples.shift();
    }
    this.writeSamples();
    // Also when nothing new is due: a round that failed left work behind.
    const unfinished = this.compactProgress < this.compactRev || this.tidyPending;
    if (this.closed || (target <= this.compactRev && !unfinished)) return Promise.resolve();
    const goal = Math.max(target, this.compactRev);
    return this.compactRound(goal).catch((err: unknown) => this.compactionFailed(err, goal));
  }

  private writeSamples(): void {
    const samples = samplesToPersist(this.samples);
    const written = this.samplesWritten;
    const same =
      written.length === samples.length &&
      samples.every((s, i) => s.at === written[i].at && s.rev === written[i].rev);
    if (this.closed || same) return;
    this.samplesWritten = samples;
    this.samplesWrite = this.writer.setMeta(retentionSamplesMeta(samples)).catch((err: unknown) => {
      // Only the schedule is at stake: the next tick writes it again.
      this.samplesWritten = [];
      if (this.closed) return;
      this.log().warn(
        { err: err instanceof Error ? err.message : String(err) },
        "could not record where the store's history starts; the next compaction tick tries again (check free disk space and file permissions)",
      );
    });
  }

  private compactionFailed(err: unknown, target: number): void {
    if (this.closed) return;
    this.log().warn(
      {
        err: err instanceof Error ? err.message : String(err),
        target,
        compactedRevision: this.compactRev,
        doneUpTo: this.compactProgress,
      },
      "compacting the store's history failed; the next compaction tick resumes it (check free disk space and file permissions)",
    );
  }

  private log(): Logger {
    this.logger ??= createLogger().child({ component: 'storage' });
    return this.logger;
  }

  // ------------------------------------------------------------------ lifecycle

  async close(): Promise<void> {
    if (this.closed) return;
    // Acknowledge every write already accepted before the file is closed.
    while (this.committing || this.pending.length || this.urgent.length) {
      if (!this.committing) this.flush();
      await this.committing;
    }
    await this.delivering;
    this.closed = true;
    if (this.compactTimer) clearInterval(this.compactTimer);
    await this.compacting.catch(() => undefined);
    await this.samplesWrite;
    for (const w of this.watchers) w.cancelled = true;
    this.watchers.clear();
    if (this.reader !== undefined) {
      await this.writer.close();
      try {
        this.reader.close();
      } catch {
        // Inline: the writer closed the only connection.
      }
    }
    this.unlock();
  }

  /** Row and page counts, for metrics and the churn test. */
  stats(): Promise<Stats> {
    return this.writer.stats();
  }

  private assertOpen(): void {
    if (this.closed) throw new StorageError('Unavailable', 'the store is closed');
  }

  private assertAvailable(revision: number): void {
    if (revision < this.compactRev) throw compacted(revision, this.compactRev);
  }
}

function openEngine(path: string, writer: boolean, durable: boolean): SqliteEngine {
  try {
    return new SqliteEngine(path, writer, durable);
  } catch (err) {
    throw new StorageError('Unavailable', `cannot open the database ${path}: ${(err as Error).message}`);
  }
}

function compacted(requested: number, compactedRevision: number): StorageError {
  return new StorageError(
    'Compacted',
    `revision ${requested} has been compacted (the oldest available is ${compactedRevision}); list again to get a current revision`,
    { requestedRevision: requested, compactedRevision },
  );
}

export function openSqliteStorage(options: SqliteStorageOptions): Promise<SqliteStorage> {
  return SqliteStorage.open(options);
}

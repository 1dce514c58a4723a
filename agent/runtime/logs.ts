/**
 * Container logs on the node: one file per container instance,
 * `<dataDir>/pods/<podUid>/<container>/<restartCount>.log`, holding its stdout and stderr. The
 * runtime opens it O_APPEND and hands the fd to the process, which writes it directly — through
 * no pipe, so the process keeps logging (and is never killed by SIGPIPE) while the agent is down.
 *
 * Times: since the agent does not see the writes, a poller (every `pollMs`, 250 ms by default, on
 * the injected Clock, while some instance is live) notes in a sidecar index (`<n>.log.idx`, see
 * log-index.ts) when the file grew. A line gets the time of the poll that first saw its first
 * byte: accurate to the poll interval while the agent runs. Bytes written while the agent was
 * down get the time it first looked again, or the file's modification time if that is earlier
 * (the last write; the earlier lines of such a stretch are older than their time).
 *
 * Rotation: when a live log reaches `maxBytes` (10 MiB by default) — or its index does, for a
 * process writing a few bytes at a time — it is copied to `<n>.log.1` (older copies shift to .2,
 * … up to `maxFiles`, 3 by default; the oldest is dropped), its index to `<n>.log.1.idx`, and the
 * original is truncated (copytruncate: the process's O_APPEND fd simply goes on at the new end).
 * Bytes the process writes between the end of the copy and the truncation (microseconds) are
 * lost; that is copytruncate's known cost, the price of rotating under a writer we do not control.
 *
 * Which instances are live: the runtime says so — `openForWriting` (a new instance), `track` (an
 * instance still running after an agent restart), `markEnded` (its process is gone: the last bytes
 * are indexed and followers finish). An instance nobody marked live is read as it is on disk.
 */
import { constants, mkdirSync, openSync, promises as fsp } from 'node:fs';
import path from 'node:path';
import { realClock, type Clock, type TimerHandle } from '../../client/util/clock.js';
import { quietLogger, type Logger } from '../logger.js';
import { containerDir, instanceNumbers, instancePath, isNotFound, podDir } from './layout.js';
import {
  appendIndex,
  formatIndexEntries,
  indexedBytes,
  indexPathOf,
  readIndex,
  type IndexEntry,
} from './log-index.js';
import { streamLog, type LogView } from './log-stream.js';
import type { LogRequest, LogSource } from './types.js';

export interface LogStoreOptions {
  dataDir: string;
  clock?: Clock;
  logger?: Logger;
  /** Rotate a log when it reaches this size (default 10 MiB). */
  maxBytes?: number;
  /** Rotated copies kept per instance (default 3: `.1` newest … `.3` oldest). */
  maxFiles?: number;
  /** How often live logs are checked for growth (default 250 ms). */
  pollMs?: number;
}

export class LogStore implements LogSource {
  private readonly dataDir: string;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly maxBytes: number;
  private readonly maxFiles: number;
  private readonly pollMs: number;
  private readonly instances = new Map<string, LogInstance>();
  private timer?: TimerHandle;
  private polling?: Promise<void>;
  private closed = false;

  constructor(opts: LogStoreOptions) {
    this.dataDir = path.resolve(opts.dataDir);
    this.clock = opts.clock ?? realClock;
    this.logger = opts.logger ?? quietLogger();
    this.maxBytes = opts.maxBytes ?? 10 * 1024 * 1024;
    this.maxFiles = Math.max(0, opts.maxFiles ?? 3);
    this.pollMs = opts.pollMs ?? 250;
  }

  logPath(podUid: string, container: string, restartCount: number): string {
    return instancePath(this.dataDir, podUid, container, restartCount, '.log');
  }

  /**
   * Creates (or reopens, appending) an instance's log and returns a write-only O_APPEND fd for
   * the process's stdout and stderr. The caller closes its copy once the process has it. The
   * instance is live from now on.
   */
  openForWriting(podUid: string, container: string, restartCount: number): number {
    if (this.closed) {
      throw new Error('the log store is closed (the agent is shutting down): start no containers now');
    }
    const file = this.logPath(podUid, container, restartCount);
    mkdirSync(path.dirname(file), { recursive: true });
    const fd = openSync(file, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT, 0o640);
    const instance = this.instance(podUid, container, restartCount);
    // Everything written from now on is seen by a poll: no catching up with mtime needed.
    instance.watched = true;
    instance.setLive(true);
    this.schedulePoll();
    return fd;
  }

  /**
   * Marks an instance whose process is still running (found by the runtime after an agent
   * restart) as live: what it wrote while the agent was down is indexed now, later writes by the
   * poller.
   */
  async track(podUid: string, container: string, restartCount: number): Promise<void> {
    if (this.closed) return;
    const instance = this.instance(podUid, container, restartCount);
    await instance.exclusive(() => this.update(instance));
    instance.watched = true;
    instance.setLive(true);
    this.schedulePoll();
  }

  /**
   * The instance's process is gone: indexes its last bytes, ends the streams following it.
   * Idempotent (the runtime calls it when it sees an exit; calling it again does no harm).
   */
  async markEnded(podUid: string, container: string, restartCount: number): Promise<void> {
    if (this.closed) return; // the next agent indexes what is left when it reads the log
    const instance = this.instance(podUid, container, restartCount);
    await instance.exclusive(() => this.update(instance));
    instance.setLive(false);
    this.forgetIfIdle(instance);
  }

  /** The restart counts that have a log on disk, ascending: the last is the current instance. */
  instanceNumbers(podUid: string, container: string): Promise<number[]> {
    return instanceNumbers(containerDir(this.dataDir, podUid, container), '.log');
  }

  /** Deletes one instance's log, its rotated copies and indexes (followers end). */
  async removeInstance(podUid: string, container: string, restartCount: number): Promise<void> {
    const key = instanceKey(podUid, container, restartCount);
    const instance = this.instances.get(key);
    this.instances.delete(key);
    instance?.setLive(false);
    // Let an update in progress finish first, or it could write the index back.
    await instance?.exclusive(async () => undefined);
    const dir = path.dirname(this.logPath(podUid, container, restartCount)); // validates the number
    const own = new RegExp(`^${restartCount}\\.log(\\.\\d+)?(\\.idx)?(\\.tmp)?$`);
    let names: string[] = [];
    try {
      names = await fsp.readdir(dir);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    await Promise.all(
      names.filter((n) => own.test(n)).map((n) => fsp.rm(path.join(dir, n), { force: true })),
    );
  }

  /** Deletes the pod's directory — its logs and everything else kept in it (followers end). */
  async removePod(podUid: string): Promise<void> {
    const prefix = `${podUid}/`;
    const removed = [...this.instances.entries()].filter(([key]) => key.startsWith(prefix));
    for (const [key, instance] of removed) {
      this.instances.delete(key);
      instance.setLive(false);
    }
    await Promise.all(removed.map(([, instance]) => instance.exclusive(async () => undefined)));
    await fsp.rm(podDir(this.dataDir, podUid), { recursive: true, force: true });
  }

  async stream(req: LogRequest, write: (chunk: Buffer) => boolean, signal: AbortSignal): Promise<void> {
    const numbers = await this.instanceNumbers(req.podUid, req.container);
    const current = numbers.at(-1);
    if (current === undefined) {
      throw new Error(
        `container "${req.container}" of pod ${req.podUid} has no logs on this node: it has not started yet (check the pod's events), or the pod runs elsewhere`,
      );
    }
    const restartCount = req.previous ? numbers.filter((n) => n < current).at(-1) : current;
    if (restartCount === undefined) {
      throw new Error(
        `previous terminated container "${req.container}" in pod ${req.podUid} not found: it has not restarted (omit --previous)`,
      );
    }
    const instance = this.instance(req.podUid, req.container, restartCount);
    // Index what is on disk now: every byte read then has a time, and nothing written since the
    // last poll is left out.
    await instance.exclusive(() => this.update(instance));
    try {
      await streamLog(instance, req, write, signal);
    } finally {
      this.forgetIfIdle(instance);
    }
  }

  /** Checks every live log once (what the poller does every `pollMs`). */
  async pollOnce(): Promise<void> {
    if (this.closed) return;
    const live = [...this.instances.values()].filter((i) => i.isLive());
    await Promise.all(
      live.map((instance) =>
        instance
          .exclusive(() => this.update(instance))
          .catch((err: unknown) => {
            this.logger.warn({ err, log: instance.logFile }, 'could not index or rotate a container log');
          }),
      ),
    );
  }

  /** Stops polling and ends every follower (the agent is shutting down). */
  close(): void {
    this.closed = true;
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    for (const instance of this.instances.values()) instance.setLive(false);
    this.instances.clear();
  }

  private instance(podUid: string, container: string, restartCount: number): LogInstance {
    const key = instanceKey(podUid, container, restartCount);
    let instance = this.instances.get(key);
    if (!instance) {
      instance = new LogInstance(
        key,
        this.logPath(podUid, container, restartCount),
        this.maxFiles,
        this.clock,
      );
      this.instances.set(key, instance);
    }
    return instance;
  }

  /** Drops the in-memory state of an instance nobody writes or reads (its files stay). */
  private forgetIfIdle(instance: LogInstance): void {
    if (!instance.isLive() && !instance.hasListeners() && this.instances.get(instance.key) === instance) {
      this.instances.delete(instance.key);
    }
  }

  private schedulePoll(): void {
    if (this.closed || this.timer || this.polling) return;
    if (![...this.instances.values()].some((i) => i.isLive())) return;
    this.timer = this.clock.setTimeout(() => {
      this.timer = undefined;
      this.polling = this.pollOnce().finally(() => {
        this.polling = undefined;
        this.schedulePoll();
      });
    }, this.pollMs);
  }

  /** Indexes what the file gained since the last look; rotates it when it is full. */
  private async update(instance: LogInstance): Promise<void> {
    await instance.load();
    let stat;
    try {
      stat = await fsp.stat(instance.logFile);
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
    const now = this.clock.now();
    const indexed = indexedBytes(instance.index);
    let changed = false;
    if (stat.size < indexed) {
      // Truncated behind our back (not by a rotation of ours): its old times mean nothing now.
      await instance.resetIndex();
      changed = true;
    }
    if (stat.size > indexedBytes(instance.index)) {
      const last = instance.index.at(-1)?.time ?? -Infinity;
      // Unwatched bytes were written at the latest at the file's mtime (the last write).
      const seen = instance.watched ? now : Math.min(now, stat.mtimeMs);
      await instance.append({ end: stat.size, time: Math.max(last, Math.floor(seen)) });
      changed = true;
    }
    if (instance.isLive()) instance.watched = true;
    if (instance.isLive() && (stat.size >= this.maxBytes || instance.indexFileBytes >= this.maxBytes)) {
      await this.rotate(instance);
      changed = true;
    }
    if (changed) instance.notify();
  }

  private async rotate(instance: LogInstance): Promise<void> {
    const log = instance.logFile;
    if (this.maxFiles > 0) {
      for (let k = this.maxFiles - 1; k >= 1; k--) {
        await renameIfExists(`${log}.${k}`, `${log}.${k + 1}`);
        await renameIfExists(indexPathOf(`${log}.${k}`), indexPathOf(`${log}.${k + 1}`));
      }
      const copy = `${log}.1`;
      await fsp.copyFile(log, copy);
      const entries = [...instance.index];
      let copied = (await fsp.stat(copy)).size;
      // The process may have written more during the copy: take that along too.
      for (let round = 0; round < 3; round++) {
        const size = (await fsp.stat(log)).size;
        if (size <= copied) break;
        await appendRange(log, copy, copied, size);
        copied = size;
      }
      if (copied > indexedBytes(entries)) entries.push({ end: copied, time: this.clock.now() });
      await fsp.writeFile(indexPathOf(copy), formatIndexEntries(entries));
    }
    // Readers now find this generation at .1; the live file starts a new one.
    instance.startGeneration();
    // The index before the log: a crash in between then re-times the old bytes instead of
    // leaving stale entries that would mis-time the new ones.
    await fsp.writeFile(indexPathOf(log), '');
    await fsp.truncate(log, 0);
    this.logger.debug({ log, keep: this.maxFiles }, 'rotated a container log');
  }
}

/** One instance's log as the store tracks it; also what a reader sees of it (LogView). */
class LogInstance implements LogView {
  /** The live file's index, in memory (appended to disk as it grows). */
  index: IndexEntry[] = [];
  /** Bytes of the index file on disk (rotation also bounds it). */
  indexFileBytes = 0;
  /** Every write since the last index entry was seen by a poll (false: catch up with mtime). */
  watched = false;
  private gen = 0;
  private live = false;
  private loading?: Promise<void>;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly listeners = new Set<() => void>();

  constructor(
    readonly key: string,
    readonly logFile: string,
    readonly maxFiles: number,
    private readonly clock: Clock,
  ) {}

  generation(): number {
    return this.gen;
  }

  currentIndex(): readonly IndexEntry[] {
    return this.index;
  }

  isLive(): boolean {
    return this.live;
  }

  now(): number {
    return this.clock.now();
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  hasListeners(): boolean {
    return this.listeners.size > 0;
  }

  notify(): void {
    for (const listener of [...this.listeners]) listener();
  }

  setLive(live: boolean): void {
    const changed = this.live !== live;
    this.live = live;
    if (changed) this.notify();
  }

  /** Reads the index from disk once. */
  load(): Promise<void> {
    this.loading ??= (async () => {
      this.index = await readIndex(this.logFile);
      this.indexFileBytes = formatIndexEntries(this.index).length;
    })();
    return this.loading;
  }

  async append(entry: IndexEntry): Promise<void> {
    await appendIndex(this.logFile, [entry]);
    this.index.push(entry);
    this.indexFileBytes += formatIndexEntries([entry]).length;
  }

  async resetIndex(): Promise<void> {
    await fsp.writeFile(indexPathOf(this.logFile), '');
    this.index = [];
    this.indexFileBytes = 0;
  }

  startGeneration(): void {
    this.gen++;
    this.index = [];
    this.indexFileBytes = 0;
  }

  /** Runs `fn` after every earlier update of this instance (updates never interleave). */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => undefined);
    return run;
  }
}

function instanceKey(podUid: string, container: string, restartCount: number): string {
  return `${podUid}/${container}/${restartCount}`;
}

async function renameIfExists(from: string, to: string): Promise<void> {
  try {
    await fsp.rename(from, to);
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
}

/** Appends bytes [start, end) of `from` to `to`. */
async function appendRange(from: string, to: string, start: number, end: number): Promise<void> {
  const source = await fsp.open(from, 'r');
  try {
    const buffer = Buffer.alloc(end - start);
    const { bytesRead } = await source.read(buffer, 0, buffer.length, start);
    await fsp.appendFile(to, buffer.subarray(0, bytesRead));
  } finally {
    await source.close();
  }
}

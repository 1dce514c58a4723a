/**
 * Reading one container instance's log as `kubectl logs` asks for it: tail, since, timestamps,
 * byte limit, follow — across the rotated copies of the file.
 *
 * Rotation (copytruncate) moves bytes from `<n>.log` to `<n>.log.1` while a reader may be in the
 * middle of them, so positions are not file offsets but (generation, offset): each truncation of
 * the live file starts a new generation, and generation g is found at `<n>.log` when it is the
 * current one, at `<n>.log.<current-g>` after that (until it falls off the end). A reader keeps
 * its place through any number of rotations, and checks after each read of the live file that no
 * rotation happened meanwhile (a truncation under the read could hand it bytes of the next
 * generation).
 *
 * Only bytes the index covers are read from the live file, so every line has a time; lines get
 * the time of the stretch their first byte was first seen in (see log-index.ts).
 */
import { promises as fsp } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { indexedBytes, offsetSince, readIndex, timeAt, type IndexEntry } from './log-index.js';
import { isNotFound } from './layout.js';

/** How much is read at a time. */
const CHUNK_BYTES = 64 * 1024;
/** A line longer than this is sent in pieces rather than held back waiting for its end. */
const MAX_HELD_LINE_BYTES = 64 * 1024;
const NEWLINE = 0x0a;

/** What the reader needs from the log store about one instance's log. */
export interface LogView {
  /** The live file, `<dataDir>/pods/<podUid>/<container>/<n>.log`. */
  readonly logFile: string;
  /** How many rotated copies are kept (`.1` … `.maxFiles`). */
  readonly maxFiles: number;
  /** The generation of the live file now. */
  generation(): number;
  /** The live file's index (the store appends to it, and replaces it on rotation). */
  currentIndex(): readonly IndexEntry[];
  /** True while the instance may still grow: its process runs and the store polls the file. */
  isLive(): boolean;
  /** Called after each poll that changed something (growth, rotation, end). Returns unsubscribe. */
  onChange(listener: () => void): () => void;
  now(): number;
}

export interface LogReadOptions {
  tailLines?: number;
  sinceTime?: number;
  timestamps?: boolean;
  limitBytes?: number;
  follow?: boolean;
}

interface Position {
  gen: number;
  offset: number;
}

/** Streams the log to `write` until done, `write` returns false, or `signal` aborts. */
export async function streamLog(
  view: LogView,
  opts: LogReadOptions,
  write: (chunk: Buffer) => boolean,
  signal: AbortSignal,
): Promise<void> {
  const files = new GenerationFiles(view);
  try {
    await new LogStreamer(view, files, opts, write, signal).run();
  } finally {
    await files.close();
  }
}

class LogStreamer {
  private held?: { parts: Buffer[]; bytes: number; time: number };
  private skippingPartialLine = false;
  private sent = 0;
  private done = false;

  constructor(
    private readonly view: LogView,
    private readonly files: GenerationFiles,
    private readonly opts: LogReadOptions,
    private readonly write: (chunk: Buffer) => boolean,
    private readonly signal: AbortSignal,
  ) {}

  async run(): Promise<void> {
    // Without follow, the log as it is now: later growth is not waited for.
    const end: Position = { gen: this.view.generation(), offset: indexedBytes(this.view.currentIndex()) };
    let pos = await this.startPosition(end);
    while (!this.done && !this.signal.aborted) {
      if (!this.opts.follow && compare(pos, end) >= 0) break;
      const oldest = await this.files.oldestGeneration();
      // Read after the await: a rotation may have happened meanwhile.
      const current = this.view.generation();
      if (pos.gen < oldest) {
        // Rotated away before we got to it (a slow reader): carry on with what is left.
        pos = { gen: oldest, offset: 0 };
        this.held = undefined;
        continue;
      }
      let limit =
        pos.gen === current ? indexedBytes(this.view.currentIndex()) : await this.files.size(pos.gen);
      if (!this.opts.follow && pos.gen === end.gen && limit !== undefined)
        limit = Math.min(limit, end.offset);
      if (limit !== undefined && pos.offset < limit) {
        const chunk = await this.files.read(pos.gen, pos.offset, Math.min(CHUNK_BYTES, limit - pos.offset));
        if (chunk === 'moved') continue;
        if (chunk === 'gone') limit = undefined;
        else {
          const index = await this.files.index(pos.gen);
          this.consume(chunk, pos.offset, index);
          pos = { gen: pos.gen, offset: pos.offset + chunk.length };
          continue;
        }
      }
      if (limit === undefined) {
        // The file went away under us: the pod's logs were removed, or a rotation dropped it.
        if (pos.gen >= this.view.generation()) break;
        pos = { gen: pos.gen + 1, offset: 0 };
        this.held = undefined;
        continue;
      }
      if (pos.gen < current) {
        pos = { gen: pos.gen + 1, offset: 0 };
        continue;
      }
      // At the live end. `limit` and isLive() were read with no await in between: an instance
      // that is no longer live has had its last bytes indexed, and they are below `limit`.
      if (!this.opts.follow || !this.view.isLive()) break;
      await waitForChange(this.view, this.signal);
    }
    if (!this.signal.aborted) this.flushHeldLine();
  }

  private async startPosition(end: Position): Promise<Position> {
    let start: Position = { gen: await this.files.oldestGeneration(), offset: 0 };
    if (this.opts.sinceTime !== undefined) {
      const since = await this.sincePosition(this.opts.sinceTime, start.gen, end);
      if (compare(since, start) > 0) {
        start = since;
        this.skippingPartialLine = since.offset > 0 && !(await this.startsLine(since));
      }
    }
    if (this.opts.tailLines !== undefined) {
      const tail = await this.tailPosition(Math.max(0, Math.floor(this.opts.tailLines)), start.gen, end);
      if (compare(tail, start) > 0) {
        start = tail;
        this.skippingPartialLine = false;
      }
    }
    return start;
  }

  /** The start of the first stretch first seen at or after `since` (mid-line, maybe). */
  private async sincePosition(since: number, oldest: number, end: Position): Promise<Position> {
    for (let gen = oldest; gen <= end.gen; gen++) {
      const offset = offsetSince(await this.files.index(gen), since);
      if (offset === undefined) continue;
      const pos = { gen, offset };
      return compare(pos, end) < 0 ? pos : end;
    }
    return end;
  }

  /** Where the last `lines` lines before `end` start; a final line without "\n" counts. */
  private async tailPosition(lines: number, oldest: number, end: Position): Promise<Position> {
    if (lines === 0) return end;
    let found = 0;
    let lastByte = true;
    for (let gen = end.gen; gen >= oldest; gen--) {
      let hi = gen === end.gen ? end.offset : ((await this.files.size(gen)) ?? 0);
      while (hi > 0) {
        const lo = Math.max(0, hi - CHUNK_BYTES);
        const chunk = await this.files.read(gen, lo, hi - lo);
        if (chunk === 'moved') continue;
        if (chunk === 'gone') return { gen: gen + 1, offset: 0 };
        for (let i = chunk.length - 1; i >= 0; i--) {
          // A "\n" as the very last byte ends the last line; it does not start another.
          if (chunk[i] === NEWLINE && !lastByte && ++found === lines) return { gen, offset: lo + i + 1 };
          lastByte = false;
        }
        hi = lo;
      }
    }
    return { gen: oldest, offset: 0 };
  }

  private async startsLine(pos: Position): Promise<boolean> {
    for (;;) {
      const before = await this.files.read(pos.gen, pos.offset - 1, 1);
      if (before === 'moved') continue;
      return before !== 'gone' && before[0] === NEWLINE;
    }
  }

  /** Splits a chunk read at `offset` into lines and sends the ones asked for. */
  private consume(chunk: Buffer, offset: number, index: readonly IndexEntry[]): void {
    const out: Buffer[] = [];
    let i = 0;
    if (this.skippingPartialLine) {
      const newline = chunk.indexOf(NEWLINE);
      if (newline < 0) return;
      this.skippingPartialLine = false;
      i = newline + 1;
    }
    while (i < chunk.length) {
      const newline = chunk.indexOf(NEWLINE, i);
      const pieceEnd = newline < 0 ? chunk.length : newline + 1;
      const piece = chunk.subarray(i, pieceEnd);
      const held = (this.held ??= { parts: [], bytes: 0, time: timeAt(index, offset + i, this.view.now()) });
      held.parts.push(piece);
      held.bytes += piece.length;
      if (newline >= 0 || held.bytes >= MAX_HELD_LINE_BYTES) {
        this.held = undefined;
        this.format(Buffer.concat(held.parts, held.bytes), held.time, out);
      }
      i = pieceEnd;
    }
    this.send(out);
  }

  private flushHeldLine(): void {
    if (!this.held || this.done) return;
    const out: Buffer[] = [];
    this.format(Buffer.concat(this.held.parts, this.held.bytes), this.held.time, out);
    this.held = undefined;
    this.send(out);
  }

  private format(line: Buffer, time: number, out: Buffer[]): void {
    if (this.opts.sinceTime !== undefined && time < this.opts.sinceTime) return;
    if (this.opts.timestamps) out.push(Buffer.from(`${rfc3339NanoFixed(time)} `));
    out.push(line);
  }

  private send(parts: Buffer[]): void {
    if (parts.length === 0 || this.done) return;
    let chunk = Buffer.concat(parts);
    if (this.opts.limitBytes !== undefined) {
      const remaining = this.opts.limitBytes - this.sent;
      if (chunk.length >= remaining) {
        chunk = chunk.subarray(0, Math.max(0, remaining));
        this.done = true;
      }
    }
    if (chunk.length === 0) return;
    this.sent += chunk.length;
    if (!this.write(chunk)) this.done = true;
  }
}

/**
 * Open files by generation. A rotated file's content never changes, so its handle stays good
 * through later renames; the live file's handle is only good while no rotation happened.
 */
class GenerationFiles {
  private readonly handles = new Map<number, { handle: FileHandle; openedAt: number; rotated: boolean }>();
  private readonly indexes = new Map<number, IndexEntry[]>();
  private oldest?: { at: number; gen: number };

  constructor(private readonly view: LogView) {}

  /** The oldest generation still on disk (looked up again only after a rotation). */
  async oldestGeneration(): Promise<number> {
    const current = this.view.generation();
    if (this.oldest?.at === current) return this.oldest.gen;
    let back = 0;
    while (back < this.view.maxFiles && (await exists(`${this.view.logFile}.${back + 1}`))) back++;
    this.oldest = { at: current, gen: current - back };
    return current - back;
  }

  /** The whole size of a rotated generation (undefined: gone). Not for the live one. */
  async size(gen: number): Promise<number | undefined> {
    for (;;) {
      const open = await this.open(gen);
      if (open === 'moved') continue; // a rotation between resolving and opening: resolve again
      return open === 'gone' ? undefined : (await open.stat()).size;
    }
  }

  /** Bytes [offset, offset+length) of generation `gen`; 'moved': a rotation intervened, retry. */
  async read(gen: number, offset: number, length: number): Promise<Buffer | 'moved' | 'gone'> {
    const open = await this.open(gen);
    if (open === 'gone' || open === 'moved') return open;
    const buffer = Buffer.alloc(length);
    const { bytesRead } = await open.read(buffer, 0, length, offset);
    const entry = this.handles.get(gen);
    if (entry && !entry.rotated && this.view.generation() !== entry.openedAt) {
      // Truncated during the read, maybe: what we got could belong to the next generation.
      await this.forget(gen);
      return 'moved';
    }
    return buffer.subarray(0, bytesRead);
  }

  async index(gen: number): Promise<readonly IndexEntry[]> {
    if (gen === this.view.generation()) return this.view.currentIndex();
    let entries = this.indexes.get(gen);
    if (!entries) {
      const file = this.pathOf(gen);
      entries = file ? await readIndex(file) : [];
      // Only a rotated generation's index is final; cache it only if it still was rotated.
      if (gen < this.view.generation()) this.indexes.set(gen, entries);
    }
    return entries;
  }

  async close(): Promise<void> {
    for (const gen of [...this.handles.keys()]) await this.forget(gen);
  }

  private pathOf(gen: number): string | undefined {
    const back = this.view.generation() - gen;
    if (back === 0) return this.view.logFile;
    if (back < 0 || back > this.view.maxFiles) return undefined;
    return `${this.view.logFile}.${back}`;
  }

  private async open(gen: number): Promise<FileHandle | 'moved' | 'gone'> {
    const cached = this.handles.get(gen);
    if (cached && (cached.rotated || cached.openedAt === this.view.generation())) return cached.handle;
    if (cached) await this.forget(gen);
    const resolvedAt = this.view.generation();
    const file = this.pathOf(gen);
    if (!file) return 'gone';
    let handle: FileHandle;
    try {
      handle = await fsp.open(file, 'r');
    } catch (err) {
      if (isNotFound(err)) return 'gone';
      throw err;
    }
    if (this.view.generation() !== resolvedAt) {
      await handle.close();
      return 'moved';
    }
    this.handles.set(gen, { handle, openedAt: resolvedAt, rotated: gen < resolvedAt });
    return handle;
  }

  private async forget(gen: number): Promise<void> {
    const entry = this.handles.get(gen);
    this.handles.delete(gen);
    await entry?.handle.close().catch(() => undefined);
  }
}

function waitForChange(view: LogView, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      unsubscribe();
      signal.removeEventListener('abort', done);
      resolve();
    };
    const unsubscribe = view.onChange(done);
    signal.addEventListener('abort', done, { once: true });
  });
}

function compare(a: Position, b: Position): number {
  return a.gen - b.gen || a.offset - b.offset;
}

async function exists(file: string): Promise<boolean> {
  try {
    await fsp.access(file);
    return true;
  } catch {
    return false;
  }
}

/** `kubectl logs --timestamps` format: RFC 3339, nine fraction digits, UTC. */
export function rfc3339NanoFixed(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000000Z');
}

/**
 * Bearer tokens: `<id>.<secret>` (like Kubernetes bootstrap tokens). Only a SHA-256 of the
 * secret is kept, in <data-dir>/tokens.json (0600); the admin token created on first start is
 * also written to <data-dir>/admin.token (0600) for the person who runs the server.
 *
 * tokens.json is a snapshot; tokens created since are appended, one JSON line each, to the
 * log it names (tokens.<generation>.log). Every join issues a node credential, and rewriting
 * all of them per join made joining thousands of machines quadratic. A deletion writes a new
 * snapshot with the next generation, so a crash between the rename and the old log's removal
 * cannot bring a deleted token back. The snapshot is written atomically (write, fsync, rename).
 *
 * Replicas may share the data folder: each re-reads the files when they changed (checked at
 * most every FILES_RECHECK_MS, and on that timer even when no request comes), so a token
 * deleted through one replica stops working on the others within about a second. Every
 * revocation seen — here or in the files — is reported to `revocations`, which ends the
 * streams and sessions opened with the token.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { appendFileSync, existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Identity, Role } from '../../client/api/local.js';
import type { Clock, TimerHandle } from '../../client/util/clock.js';
import { writeFileAtomic } from '../../client/util/atomicfile.js';
import { Revocations } from './revocations.js';

export interface TokenRecord {
  id: string;
  /** SHA-256 of the secret, hex. */
  hash: string;
  name: string;
  role: Role;
  nodeName?: string;
  createdAt: string;
  /** RFC 3339; absent = never expires. */
  expiresAt?: string;
  description?: string;
  /** Node credentials: SHA-256 (hex) of the node password the agent joined with (nodejoin.ts). */
  nodePasswordHash?: string;
}

/** How often the files are checked for changes made by another replica. */
export const FILES_RECHECK_MS = 1000;

const ID_CHARS = 'abcdefghijklmnopqrstuvwxyz0123456789';
const TOKEN_RE = /^([a-z0-9]{6})\.([a-z0-9]{32})$/;

function randomChars(n: number): string {
  const bytes = randomBytes(n);
  let s = '';
  for (let i = 0; i < n; i++) s += ID_CHARS[bytes[i] % ID_CHARS.length];
  return s;
}

/** How a secret is kept (tokens, node passwords): SHA-256, hex. Both are long and random. */
export function secretHash(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** Compares a secret with a kept hash in constant time. */
export function matchesSecretHash(secret: string, hash: string): boolean {
  const given = Buffer.from(secretHash(secret), 'hex');
  const want = Buffer.from(hash, 'hex');
  return given.length === want.length && timingSafeEqual(given, want);
}

interface Snapshot {
  tokens: TokenRecord[];
  /** Names the log of records created after this snapshot (absent in older data folders). */
  logGeneration?: number;
}

/** A log may grow to this many lines (or the snapshot's size, if larger) before it is folded in. */
const MIN_LOG_LINES_BEFORE_SNAPSHOT = 1000;

export class TokenStore {
  private records = new Map<string, TokenRecord>();
  /** What the files looked like when last read or written (another replica may change them). */
  private loadedState = '';
  private generation = 0;
  private logLines = 0;
  /** Records in the snapshot: the log is folded in once it is as long (so folding stays linear). */
  private snapshotSize = 0;
  /** The log ends in a line torn by a crash: the next append starts on a new line. */
  private tornTail = false;
  private readonly verified = new Map<string, { identity: Identity; expiresAt: number | undefined }>();
  private readonly path: string;
  /** When the files were last compared with what was read (clock time). */
  private lastCheck = -Infinity;
  private recheckTimer: { timers: Clock; handle: TimerHandle } | undefined;
  /** What is open with each token, to be ended when the token is revoked. */
  readonly revocations = new Revocations();

  constructor(
    private readonly dataDir: string,
    private readonly clock: Clock,
  ) {
    this.path = join(dataDir, 'tokens.json');
    this.load();
  }

  /**
   * Re-reads the files every FILES_RECHECK_MS while running, so that a deletion made by a
   * replica ends this server's streams too even when no request comes in. The files change in
   * real time, so the control plane polls on the real clock (`timers`): a test clock moved by
   * days would otherwise replay a poll per second of them.
   */
  startWatchingFiles(timers: Clock = this.clock): void {
    if (this.recheckTimer) return;
    const tick = () => {
      this.recheckTimer = { timers, handle: timers.setTimeout(tick, FILES_RECHECK_MS) };
      this.recheckFiles();
    };
    this.recheckTimer = { timers, handle: timers.setTimeout(tick, FILES_RECHECK_MS) };
  }

  stopWatchingFiles(): void {
    if (this.recheckTimer) this.recheckTimer.timers.clearTimeout(this.recheckTimer.handle);
    this.recheckTimer = undefined;
  }

  private logPath(generation = this.generation): string {
    return join(this.dataDir, `tokens.${generation}.log`);
  }

  /** Reads tokens.json and its log (written by this server, or by a replica sharing the folder). */
  private load(): void {
    if (!existsSync(this.path)) return;
    // Each file is looked at before it is read: a change made while we read shows up as a
    // change at the next check, never as one we think we have seen.
    const snapshotState = fileState(this.path);
    const snapshot = JSON.parse(readFileSync(this.path, 'utf8')) as Snapshot;
    const generation = snapshot.logGeneration ?? 0;
    const logState = fileState(this.logPath(generation));
    // A log removed since its stat belongs to a replaced snapshot: this read fails, the next succeeds.
    const log = logState === ABSENT ? '' : readFileSync(this.logPath(generation), 'utf8');
    const records = new Map(snapshot.tokens.map((r) => [r.id, r]));
    let logLines = 0;
    for (const line of log.split('\n')) {
      if (!line) continue;
      try {
        const record = JSON.parse(line) as TokenRecord;
        records.set(record.id, record);
        logLines++;
      } catch {
        // A line torn by a crash mid-append: the token it held was never handed out.
      }
    }
    const before = this.records;
    this.generation = generation;
    this.records = records;
    this.snapshotSize = snapshot.tokens.length;
    this.logLines = logLines;
    this.tornTail = log.length > 0 && !log.endsWith('\n');
    this.loadedState = `${snapshotState}/${logState}`;
    this.verified.clear();
    this.lastCheck = this.clock.now();
    this.revocations.revoked(goneOrReplaced(before, this.records));
  }

  private filesState(): string {
    return `${fileState(this.path)}/${fileState(this.logPath())}`;
  }

  /** An unknown token may have been issued by a replica since we read the files. */
  private reloadIfChanged(): void {
    this.lastCheck = this.clock.now();
    if (!existsSync(this.path) || this.filesState() === this.loadedState) return;
    try {
      this.load();
    } catch {
      // A replica replaced the snapshot while we read it (its old log is gone): read it again.
      this.load();
    }
  }

  /** A replica may have deleted tokens: look at the files again (two stats) when due. */
  private recheckIfDue(): void {
    if (this.clock.now() - this.lastCheck >= FILES_RECHECK_MS) this.recheckFiles();
  }

  private recheckFiles(): void {
    try {
      this.reloadIfChanged();
    } catch {
      // A file being replaced under us, or unreadable for a moment: keep what we know and
      // look again on the next check (a failing check must not fail the request).
      this.lastCheck = this.clock.now();
    }
  }

  get adminTokenPath(): string {
    return join(this.dataDir, 'admin.token');
  }

  /** The identity behind a bearer token, or undefined (unknown, malformed or expired). */
  authenticate(token: string): Identity | undefined {
    this.recheckIfDue();
    // Every call carries a token: remember verified ones instead of hashing each time.
    const hit = this.verified.get(token);
    if (hit && (hit.expiresAt === undefined || hit.expiresAt > this.clock.now())) return hit.identity;
    const identity = this.verify(token);
    if (identity) {
      if (this.verified.size >= 10_000) this.verified.clear();
      const record = this.records.get(token.trim().slice(0, 6))!;
      this.verified.set(token, {
        identity,
        expiresAt: record.expiresAt ? Date.parse(record.expiresAt) : undefined,
      });
    }
    return identity;
  }

  private verify(token: string): Identity | undefined {
    const m = TOKEN_RE.exec(token.trim());
    if (!m) return undefined;
    if (!this.records.has(m[1])) this.reloadIfChanged();
    const record = this.records.get(m[1]);
    if (!record) return undefined;
    if (!matchesSecretHash(m[2], record.hash)) return undefined;
    if (record.expiresAt && Date.parse(record.expiresAt) <= this.clock.now()) return undefined;
    return identityOfRecord(record);
  }

  /** Issues a token; "{id}" in the name is replaced by the token's id. */
  create(options: {
    name: string;
    role: Role;
    ttlMs?: number;
    nodeName?: string;
    description?: string;
    nodePasswordHash?: string;
  }): {
    token: string;
    record: TokenRecord;
  } {
    this.reloadIfChanged();
    let id = randomChars(6);
    while (this.records.has(id)) id = randomChars(6);
    const secret = randomChars(32);
    const now = this.clock.now();
    const record: TokenRecord = {
      id,
      hash: secretHash(secret),
      name: options.name.replace('{id}', id),
      role: options.role,
      createdAt: new Date(now).toISOString(),
      ...(options.nodeName ? { nodeName: options.nodeName } : {}),
      ...(options.ttlMs ? { expiresAt: new Date(now + options.ttlMs).toISOString() } : {}),
      ...(options.description ? { description: options.description } : {}),
      ...(options.nodePasswordHash ? { nodePasswordHash: options.nodePasswordHash } : {}),
    };
    this.records.set(id, record);
    this.append(record);
    return { token: `${id}.${secret}`, record };
  }

  list(): TokenRecord[] {
    return [...this.records.values()];
  }

  /** One token's record by its id (a browser session names its token by id). */
  get(id: string): TokenRecord | undefined {
    if (!this.records.has(id)) this.reloadIfChanged();
    return this.records.get(id);
  }

  /** The credentials issued to a node that are still on record (any replica's). */
  credentialsOfNode(nodeName: string): TokenRecord[] {
    this.reloadIfChanged();
    return [...this.records.values()].filter((r) => r.nodeName === nodeName);
  }

  /** Deletes a token: requests, streams and sessions using it are refused or ended at once. */
  delete(id: string): boolean {
    this.reloadIfChanged();
    const had = this.records.delete(id);
    if (had) {
      this.save();
      this.revocations.revoked([id]);
    }
    return had;
  }

  /** Removes every token bound to a node (its Node was deleted, or another machine took its name). */
  revokeNode(nodeName: string): number {
    this.reloadIfChanged();
    const revoked: string[] = [];
    for (const [id, r] of this.records) {
      if (r.nodeName === nodeName) {
        this.records.delete(id);
        revoked.push(id);
      }
    }
    if (revoked.length) {
      this.save();
      this.revocations.revoked(revoked);
    }
    return revoked.length;
  }

  /** Makes sure <data-dir>/admin.token holds a valid admin token; returns it. */
  ensureAdminToken(): string {
    const path = this.adminTokenPath;
    if (existsSync(path)) {
      const token = readFileSync(path, 'utf8').trim();
      if (this.authenticate(token)?.role === 'admin') return token;
    }
    const { token } = this.create({ name: 'admin', role: 'admin', description: 'created on first start' });
    writeFileAtomic(path, token + '\n');
    return token;
  }

  /** Records a new token: one appended line (a new token invalidates nothing remembered). */
  private append(record: TokenRecord): void {
    if (
      !existsSync(this.path) ||
      this.logLines >= Math.max(MIN_LOG_LINES_BEFORE_SNAPSHOT, this.snapshotSize)
    ) {
      this.save();
      return;
    }
    // Had a replica appended since we read, its line is unread: the files must still look changed.
    const wasCurrent = this.filesState() === this.loadedState;
    appendFileSync(this.logPath(), (this.tornTail ? '\n' : '') + JSON.stringify(record) + '\n', {
      mode: 0o600,
    });
    this.tornTail = false;
    this.logLines++;
    if (wasCurrent) this.loadedState = this.filesState();
  }

  /** Writes every record to a new snapshot with an empty log of the next generation. */
  private save(): void {
    // Any change (a deletion, a revocation) may invalidate a remembered token.
    this.verified.clear();
    const oldLog = this.logPath();
    this.generation++;
    this.logLines = 0;
    this.tornTail = false;
    this.snapshotSize = this.records.size;
    const snapshot: Snapshot = { tokens: [...this.records.values()], logGeneration: this.generation };
    // A torn snapshot would stop the next start: it replaces the old one only once on disk.
    writeFileAtomic(this.path, JSON.stringify(snapshot, null, 1) + '\n');
    rmSync(oldLog, { force: true });
    this.loadedState = this.filesState();
  }
}

const ABSENT = '-';

/** What tells a file's change cheaply: its inode (a rename replaced it), modification time and size. */
function fileState(path: string): string {
  const st = statSync(path, { throwIfNoEntry: false });
  return st ? `${st.ino}:${st.mtimeMs}:${st.size}` : ABSENT;
}

/** Who a token's holder is; the token's id goes along, so what they open can end with it. */
export function identityOfRecord(record: TokenRecord): Identity {
  return {
    name: record.name,
    role: record.role,
    ...(record.nodeName ? { nodeName: record.nodeName } : {}),
    tokenId: record.id,
  };
}

/** Ids that were in `before` and are gone from `after`, or now hold another secret. */
function goneOrReplaced(before: Map<string, TokenRecord>, after: Map<string, TokenRecord>): string[] {
  const ids: string[] = [];
  for (const [id, r] of before) if (after.get(id)?.hash !== r.hash) ids.push(id);
  return ids;
}

/**
 * Bearer tokens: `<id>.<secret>` (like Kubernetes bootstrap tokens). Only a SHA-256 of the
 * secret is kept, in <data-dir>/tokens.json (0600); the admin token created on first start is
 * also written to <data-dir>/admin.token (0600) for the person who runs the server.
 *
 * tokens.json is a snapshot; tokens created since are appended, one JSON line each, to the
 * log it names (tokens.<generation>.log). Every join issues a node credential, and rewriting
 * all of them per join made joining thousands of machines quadratic. A deletion writes a new
 * snapshot with the next generation, so a crash between the rename and the old log's removal
 * cannot bring a deleted token back.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import {
  appendFileSync,
  chmodSync,
  existsSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import type { Identity, Role } from '../../client/api/local.js';
import type { Clock } from '../../client/util/clock.js';

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
}

const ID_CHARS = 'abcdefghijklmnopqrstuvwxyz0123456789';
const TOKEN_RE = /^([a-z0-9]{6})\.([a-z0-9]{32})$/;

function randomChars(n: number): string {
  const bytes = randomBytes(n);
  let s = '';
  for (let i = 0; i < n; i++) s += ID_CHARS[bytes[i] % ID_CHARS.length];
  return s;
}

function sha256(s: string): string {
  return createHash('sha256').update(s).digest('hex');
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

  constructor(
    private readonly dataDir: string,
    private readonly clock: Clock,
  ) {
    this.path = join(dataDir, 'tokens.json');
    this.load();
  }

  private logPath(generation = this.generation): string {
    return join(this.dataDir, `tokens.${generation}.log`);
  }

  /** Reads tokens.json and its log (written by this server, or by a replica sharing the folder). */
  private load(): void {
    if (!existsSync(this.path)) return;
    const snapshot = JSON.parse(readFileSync(this.path, 'utf8')) as Snapshot;
    this.generation = snapshot.logGeneration ?? 0;
    this.records = new Map(snapshot.tokens.map((r) => [r.id, r]));
    this.snapshotSize = snapshot.tokens.length;
    this.logLines = 0;
    this.tornTail = false;
    if (existsSync(this.logPath())) {
      const log = readFileSync(this.logPath(), 'utf8');
      this.tornTail = log.length > 0 && !log.endsWith('\n');
      for (const line of log.split('\n')) {
        if (!line) continue;
        try {
          const record = JSON.parse(line) as TokenRecord;
          this.records.set(record.id, record);
          this.logLines++;
        } catch {
          // A line torn by a crash mid-append: the token it held was never handed out.
        }
      }
    }
    this.loadedState = this.filesState();
    this.verified.clear();
  }

  private filesState(): string {
    const size = (p: string) => (existsSync(p) ? `${statSync(p).mtimeMs}:${statSync(p).size}` : '-');
    return `${size(this.path)}/${size(this.logPath())}`;
  }

  /** An unknown token may have been issued by a replica since we read the files. */
  private reloadIfChanged(): void {
    if (existsSync(this.path) && this.filesState() !== this.loadedState) this.load();
  }

  get adminTokenPath(): string {
    return join(this.dataDir, 'admin.token');
  }

  /** The identity behind a bearer token, or undefined (unknown, malformed or expired). */
  authenticate(token: string): Identity | undefined {
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
    const given = Buffer.from(sha256(m[2]), 'hex');
    const want = Buffer.from(record.hash, 'hex');
    if (given.length !== want.length || !timingSafeEqual(given, want)) return undefined;
    if (record.expiresAt && Date.parse(record.expiresAt) <= this.clock.now()) return undefined;
    return {
      name: record.name,
      role: record.role,
      ...(record.nodeName ? { nodeName: record.nodeName } : {}),
    };
  }

  /** Issues a token; "{id}" in the name is replaced by the token's id. */
  create(options: { name: string; role: Role; ttlMs?: number; nodeName?: string; description?: string }): {
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
      hash: sha256(secret),
      name: options.name.replace('{id}', id),
      role: options.role,
      createdAt: new Date(now).toISOString(),
      ...(options.nodeName ? { nodeName: options.nodeName } : {}),
      ...(options.ttlMs ? { expiresAt: new Date(now + options.ttlMs).toISOString() } : {}),
      ...(options.description ? { description: options.description } : {}),
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

  delete(id: string): boolean {
    this.reloadIfChanged();
    const had = this.records.delete(id);
    if (had) this.save();
    return had;
  }

  /** Removes every token bound to a node (its Node was deleted). */
  revokeNode(nodeName: string): number {
    this.reloadIfChanged();
    let n = 0;
    for (const [id, r] of this.records) {
      if (r.nodeName === nodeName) {
        this.records.delete(id);
        n++;
      }
    }
    if (n) this.save();
    return n;
  }

  /** Makes sure <data-dir>/admin.token holds a valid admin token; returns it. */
  ensureAdminToken(): string {
    const path = this.adminTokenPath;
    if (existsSync(path)) {
      const token = readFileSync(path, 'utf8').trim();
      if (this.authenticate(token)?.role === 'admin') return token;
    }
    const { token } = this.create({ name: 'admin', role: 'admin', description: 'created on first start' });
    writeFileSync(path, token + '\n', { mode: 0o600 });
    chmodSync(path, 0o600);
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
    appendFileSync(this.logPath(), (this.tornTail ? '\n' : '') + JSON.stringify(record) + '\n', {
      mode: 0o600,
    });
    this.tornTail = false;
    this.logLines++;
    this.loadedState = this.filesState();
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
    const tmp = `${this.path}.tmp`;
    const snapshot: Snapshot = { tokens: [...this.records.values()], logGeneration: this.generation };
    writeFileSync(tmp, JSON.stringify(snapshot, null, 1) + '\n', { mode: 0o600 });
    renameSync(tmp, this.path);
    rmSync(oldLog, { force: true });
    this.loadedState = this.filesState();
  }
}

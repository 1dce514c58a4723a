/**
 * Bearer tokens: `<id>.<secret>` (like Kubernetes bootstrap tokens). Only a SHA-256 of the
 * secret is kept, in <data-dir>/tokens.json (0600); the admin token created on first start is
 * also written to <data-dir>/admin.token (0600) for the person who runs the server.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
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

export class TokenStore {
  private records = new Map<string, TokenRecord>();
  private loadedAt = 0;
  private readonly verified = new Map<string, { identity: Identity; expiresAt: number | undefined }>();
  private readonly path: string;

  constructor(
    private readonly dataDir: string,
    private readonly clock: Clock,
  ) {
    this.path = join(dataDir, 'tokens.json');
    this.load();
  }

  /** Reads tokens.json (written by this server, or by a replica sharing the folder). */
  private load(): void {
    if (!existsSync(this.path)) return;
    this.loadedAt = statSync(this.path).mtimeMs;
    const list = JSON.parse(readFileSync(this.path, 'utf8')) as { tokens: TokenRecord[] };
    this.records = new Map(list.tokens.map((r) => [r.id, r]));
    this.verified.clear();
  }

  /** An unknown token may have been issued by a replica since we read the file. */
  private reloadIfChanged(): void {
    if (existsSync(this.path) && statSync(this.path).mtimeMs !== this.loadedAt) this.load();
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
    this.save();
    return { token: `${id}.${secret}`, record };
  }

  list(): TokenRecord[] {
    return [...this.records.values()];
  }

  delete(id: string): boolean {
    const had = this.records.delete(id);
    if (had) this.save();
    return had;
  }

  /** Removes every token bound to a node (its Node was deleted). */
  revokeNode(nodeName: string): number {
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

  private save(): void {
    // Any change (a deletion, a revocation) may invalidate a remembered token.
    this.verified.clear();
    const tmp = `${this.path}.tmp`;
    writeFileSync(tmp, JSON.stringify({ tokens: [...this.records.values()] }, null, 2) + '\n', {
      mode: 0o600,
    });
    renameSync(tmp, this.path);
    this.loadedAt = statSync(this.path).mtimeMs;
  }
}

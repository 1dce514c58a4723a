/**
 * Browser-mode sign-in. The URL `kubelab server --ui` prints carries a token once
 * (`/?token=…`); the server checks it with the control plane's token store and answers with an
 * HttpOnly, SameSite=Strict session cookie. Every later request — static files and the
 * WebSocket — is authenticated by that cookie.
 *
 * The cookie is a signed, expiring statement "token <id> signed in until <time>", so that a
 * restarted server still knows its browsers (an open page reconnects signed in) without
 * storing sessions: 32 bytes, base64url — the token's id (6 bytes), the expiry in Unix
 * seconds (4), and an HMAC-SHA-256 truncated to 22 bytes over both and the token's stored
 * hash, keyed by the data folder's secret (loginkey.ts). It never holds the token's secret.
 * Each use looks the token up again, so `kubelab token delete` refuses its sessions at once (and
 * websocket.ts closes the open ones), and a token deleted and re-created under the same id does
 * not revive them (its hash differs). The identity carries the token's id for that.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Identity } from '../../client/api/local.js';
import { identityOfRecord, type TokenRecord } from '../grpc/tokens.js';

/** The roles that may use the GUI: a node's or a join token is not a person's. */
const GUI_ROLES = new Set(['admin', 'viewer']);

/** How long a sign-in lasts without use; each page load within that time extends it. */
export const SESSION_TTL_MS = 7 * 24 * 3600_000;

const ID_BYTES = 6;
const EXPIRY_BYTES = 4;
const MAC_BYTES = 22;
const COOKIE_BYTES = ID_BYTES + EXPIRY_BYTES + MAC_BYTES;
const TOKEN_ID = /^[a-z0-9]{6}$/;

export type LoginResult =
  { ok: true; identity: Identity; sessionId: string } | { ok: false; status: 401 | 403; message: string };

/** What sign-in needs of the token store (grpc/tokens.ts). */
export interface LoginTokens {
  authenticate(token: string): Identity | undefined;
  get(id: string): TokenRecord | undefined;
}

export interface LoginSessionsOptions {
  tokens: LoginTokens;
  /** The secret that signs session cookies (loginkey.ts). */
  key: Buffer;
  /** The cookie's name, once the port is known. Cookies are per host, not per port: the port keeps two servers' cookies apart. */
  nameOfCookie: () => string;
  now?: () => number;
  ttlMs?: number;
}

export class LoginSessions {
  private readonly tokens: LoginTokens;
  private readonly key: Buffer;
  private readonly now: () => number;
  private readonly ttlMs: number;

  constructor(private readonly options: LoginSessionsOptions) {
    this.tokens = options.tokens;
    this.key = options.key;
    this.now = options.now ?? Date.now;
    this.ttlMs = options.ttlMs ?? SESSION_TTL_MS;
  }

  /** Checks a login token and makes a session for it. */
  login(token: string): LoginResult {
    const checked = this.check(this.tokens.authenticate(token));
    if (!checked.ok) return checked;
    const record = this.record(token.trim().slice(0, ID_BYTES));
    if (!record) return unknownToken();
    return { ok: true, identity: checked.identity, sessionId: this.sign(record) };
  }

  get cookieName(): string {
    return this.options.nameOfCookie();
  }

  /** The `Set-Cookie` value for a session: not readable by scripts, never sent cross-site. */
  cookie(sessionId: string): string {
    // No `Secure`: browser mode is plain HTTP on loopback, which browsers treat as trustworthy.
    // No Max-Age: the browser forgets it when it closes; the signed expiry bounds it otherwise.
    return `${this.cookieName}=${sessionId}; Path=/; HttpOnly; SameSite=Strict`;
  }

  /** Who a request's `Cookie` header signs in as, if anyone. */
  identityFromCookie(header: string | undefined): Identity | undefined {
    return this.session(header)?.identity;
  }

  /**
   * A fresh `Set-Cookie` for a request whose session is past half its life, so that a GUI in
   * use stays signed in; undefined when there is nothing to renew.
   */
  renewal(header: string | undefined): string | undefined {
    const session = this.session(header);
    if (!session || session.expiresAt - this.now() > this.ttlMs / 2) return undefined;
    return this.cookie(this.sign(session.record));
  }

  /** Who an `Authorization: Bearer` header signs in as (scripts and tests; browsers cannot set it). */
  identityFromBearer(header: string | undefined): LoginResult | undefined {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
    if (!m) return undefined;
    const result = this.check(this.tokens.authenticate(m[1]));
    return result.ok ? { ...result, sessionId: '' } : result;
  }

  private session(
    header: string | undefined,
  ): { identity: Identity; record: TokenRecord; expiresAt: number } | undefined {
    const value = readCookie(header, this.cookieName);
    if (!value) return undefined;
    const bytes = Buffer.from(value, 'base64url');
    if (bytes.length !== COOKIE_BYTES || bytes.toString('base64url') !== value) return undefined;
    const id = bytes.subarray(0, ID_BYTES).toString('latin1');
    if (!TOKEN_ID.test(id)) return undefined;
    const expiresAt = bytes.readUInt32BE(ID_BYTES) * 1000;
    if (expiresAt <= this.now()) return undefined;
    const record = this.record(id);
    if (!record) return undefined;
    const mac = this.mac(record, bytes.subarray(0, ID_BYTES + EXPIRY_BYTES));
    if (!timingSafeEqual(mac, bytes.subarray(ID_BYTES + EXPIRY_BYTES))) return undefined;
    if (record.expiresAt && Date.parse(record.expiresAt) <= this.now()) return undefined;
    const checked = this.check(identityOfRecord(record));
    return checked.ok ? { identity: checked.identity, record, expiresAt } : undefined;
  }

  private record(id: string): TokenRecord | undefined {
    return this.tokens.get(id);
  }

  private sign(record: TokenRecord): string {
    const head = Buffer.alloc(ID_BYTES + EXPIRY_BYTES);
    head.write(record.id, 0, ID_BYTES, 'latin1');
    head.writeUInt32BE(Math.floor((this.now() + this.ttlMs) / 1000), ID_BYTES);
    return Buffer.concat([head, this.mac(record, head)]).toString('base64url');
  }

  private mac(record: TokenRecord, head: Buffer): Buffer {
    return createHmac('sha256', this.key).update(head).update(record.hash).digest().subarray(0, MAC_BYTES);
  }

  private check(
    identity: Identity | undefined,
  ): { ok: true; identity: Identity } | { ok: false; status: 401 | 403; message: string } {
    if (!identity) return unknownToken();
    if (!GUI_ROLES.has(identity.role)) {
      return {
        ok: false,
        status: 403,
        message: `a ${identity.role} token cannot sign in to the GUI: use an admin or viewer token (kubelab token create --role viewer)`,
      };
    }
    return { ok: true, identity };
  }
}

function unknownToken(): { ok: false; status: 401; message: string } {
  return {
    ok: false,
    status: 401,
    message:
      'the login token is not valid (unknown, expired or deleted): open the URL that `kubelab server --ui` printed, or use an admin or viewer token',
  };
}

export function readCookie(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

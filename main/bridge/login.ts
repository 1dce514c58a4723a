/**
 * Browser-mode sign-in. The URL `kubelab server --ui` prints carries a token once
 * (`/?token=…`); the server checks it with the control plane's token store and answers with an
 * HttpOnly, SameSite=Strict session cookie holding a random session id (never the token).
 * Every later request — static files and the WebSocket — is authenticated by that cookie, and
 * each use checks the token behind it again, so `kubelab token delete` ends the session too.
 */
import { randomBytes } from 'node:crypto';
import type { Identity } from '../../client/api/local.js';

/** The roles that may use the GUI: a node's or a join token is not a person's. */
const GUI_ROLES = new Set(['admin', 'viewer']);

export type LoginResult =
  { ok: true; identity: Identity; sessionId: string } | { ok: false; status: 401 | 403; message: string };

export class LoginSessions {
  /** session id → the token it was made from. Insertion order = age, for eviction. */
  private readonly sessions = new Map<string, string>();

  constructor(
    private readonly authenticate: (token: string) => Identity | undefined,
    /** The cookie's name, once the port is known. Cookies are per host, not per port: the port keeps two servers' cookies apart. */
    private readonly nameOfCookie: () => string,
    private readonly maxSessions = 1000,
  ) {}

  /** Checks a login token and opens a session for it. */
  login(token: string): LoginResult {
    const identity = this.check(token);
    if (!identity.ok) return identity;
    const sessionId = randomBytes(32).toString('base64url');
    if (this.sessions.size >= this.maxSessions) {
      this.sessions.delete(this.sessions.keys().next().value!);
    }
    this.sessions.set(sessionId, token);
    return { ok: true, identity: identity.identity, sessionId };
  }

  get cookieName(): string {
    return this.nameOfCookie();
  }

  /** The `Set-Cookie` value for a session: not readable by scripts, never sent cross-site. */
  cookie(sessionId: string): string {
    // No `Secure`: browser mode is plain HTTP on loopback, which browsers treat as trustworthy.
    return `${this.cookieName}=${sessionId}; Path=/; HttpOnly; SameSite=Strict`;
  }

  /** Who a request's `Cookie` header signs in as, if anyone. */
  identityFromCookie(header: string | undefined): Identity | undefined {
    const sessionId = readCookie(header, this.cookieName);
    if (!sessionId) return undefined;
    const token = this.sessions.get(sessionId);
    if (token === undefined) return undefined;
    const result = this.check(token);
    if (result.ok) return result.identity;
    this.sessions.delete(sessionId);
    return undefined;
  }

  /** Who an `Authorization: Bearer` header signs in as (scripts and tests; browsers cannot set it). */
  identityFromBearer(header: string | undefined): LoginResult | undefined {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
    if (!m) return undefined;
    const result = this.check(m[1]);
    return result.ok ? { ...result, sessionId: '' } : result;
  }

  private check(
    token: string,
  ): { ok: true; identity: Identity } | { ok: false; status: 401 | 403; message: string } {
    const identity = this.authenticate(token);
    if (!identity) {
      return {
        ok: false,
        status: 401,
        message:
          'the login token is not valid (unknown, expired or deleted): open the URL that `kubelab server --ui` printed, or use an admin or viewer token',
      };
    }
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

export function readCookie(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/**
 * Revocation reaching what is already open. A deleted token (or a node credential revoked
 * because its Node was deleted, or because another machine took the name over with --force)
 * must stop working everywhere at once: not only for the next request, but also for the
 * watches, log streams, agent tunnels and browser sessions opened with it. Each of those
 * registers here under its token's id; the token store reports the ids it saw go away, from a
 * deletion on this server or from re-reading the files another replica changed.
 */
import { ApiError } from '../../client/api/errors.js';
import type { Identity } from '../../client/api/local.js';

export class Revocations {
  private readonly byToken = new Map<string, Set<() => void>>();

  /**
   * Calls `fn` once, when the token behind `identity` is revoked; returns a function that
   * unregisters it (call it when the stream ends by itself). Identities without a token (the
   * control plane's own, the desktop user) are never revoked.
   */
  whenRevoked(identity: Identity, fn: () => void): () => void {
    const tokenId = identity.tokenId;
    if (!tokenId) return () => undefined;
    let waiting = this.byToken.get(tokenId);
    if (!waiting) this.byToken.set(tokenId, (waiting = new Set()));
    const entry = () => fn();
    waiting.add(entry);
    return () => {
      const set = this.byToken.get(tokenId);
      if (!set?.delete(entry)) return;
      if (!set.size) this.byToken.delete(tokenId);
    };
  }

  /** The tokens with these ids stopped working: everything opened with them ends now. */
  revoked(tokenIds: Iterable<string>): void {
    for (const id of tokenIds) {
      const waiting = this.byToken.get(id);
      if (!waiting) continue;
      this.byToken.delete(id);
      for (const fn of waiting) {
        try {
          fn();
        } catch {
          // One stream failing to end must not keep the others open.
        }
      }
    }
  }

  /** Streams and sessions waiting on a token's revocation (for tests and metrics). */
  get waiting(): number {
    let n = 0;
    for (const set of this.byToken.values()) n += set.size;
    return n;
  }
}

/** The status a stream ends with when its credential is revoked: what happened, what to do. */
export function revokedError(identity: Identity, what: string): ApiError {
  if (identity.role === 'node' && identity.nodeName) {
    return new ApiError(
      'Unauthorized',
      `the credential of node ${identity.nodeName} was revoked (its Node or the credential was deleted, or the node joined again: the same machine, or another with --force), which ended this ${what}: if this machine should still be that node, join it again with a new join token (kubelab token create)`,
    );
  }
  return new ApiError(
    'Unauthorized',
    `token ${identity.tokenId ?? ''} was deleted, which ended this ${what}: get a current token from the cluster admin (kubelab token create) and open it again`,
  );
}

/**
 * The GUI's login token for `kubelab server --ui`: an admin-role token named "ui", kept in
 * <data-dir>/ui.token (0600) like admin.token so the printed URL stays the same across
 * restarts. It is its own token, not admin.token, so that `kubelab token delete <id>` can shut
 * the GUI out (a fresh one is made on the next start) without breaking the CLI.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../../client/util/atomicfile.js';
import type { TokenStore } from '../grpc/tokens.js';

export const UI_TOKEN_NAME = 'ui';
const UI_TOKEN_DESCRIPTION = 'GUI login (kubelab server --ui)';

export function uiTokenPath(dataDir: string): string {
  return join(dataDir, 'ui.token');
}

/** Returns a valid GUI token, making one (and retiring any older one) when needed. */
export function ensureUiToken(tokens: TokenStore, dataDir: string): string {
  const path = uiTokenPath(dataDir);
  if (existsSync(path)) {
    const token = readFileSync(path, 'utf8').trim();
    const identity = tokens.authenticate(token);
    if (identity?.role === 'admin' && identity.name === UI_TOKEN_NAME) return token;
  }
  // Whatever GUI token came before (its file lost or the token deleted) stops working.
  for (const r of tokens.list()) {
    if (r.name === UI_TOKEN_NAME && r.description === UI_TOKEN_DESCRIPTION) tokens.delete(r.id);
  }
  const { token } = tokens.create({ name: UI_TOKEN_NAME, role: 'admin', description: UI_TOKEN_DESCRIPTION });
  // Whole or absent after a crash (an empty file would only cost a new token, but a clear one).
  writeFileAtomic(path, token + '\n');
  return token;
}

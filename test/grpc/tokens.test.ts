/**
 * The token store on disk: tokens survive a restart, a deleted token stays deleted even if the
 * server died halfway through writing, a line torn by a crash costs only that line, and the
 * files stay small and readable as thousands of machines join. A deletion — here or by a
 * replica sharing the folder — reaches what was opened with the token.
 */
import {
  copyFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { FakeClock, realClock } from '../../client/util/clock.js';
import { FILES_RECHECK_MS, TokenStore } from '../../main/grpc/tokens.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'kubelab-tokens-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const open = () => new TokenStore(dir, realClock);
const logs = () => readdirSync(dir).filter((f) => f.endsWith('.log'));

it('keeps every issued token across a restart, and forgets deleted ones', () => {
  const store = open();
  const admin = store.ensureAdminToken();
  const nodes = Array.from({ length: 50 }, (_, i) =>
    store.create({ name: `node:n${i}`, role: 'node', nodeName: `n${i}` }),
  );
  expect(store.delete(nodes[3].record.id)).toBe(true);
  expect(store.revokeNode('n7')).toBe(1);

  const restarted = open();
  expect(restarted.authenticate(admin)?.role).toBe('admin');
  expect(restarted.authenticate(nodes[0].token)).toEqual({
    name: 'node:n0',
    role: 'node',
    nodeName: 'n0',
    tokenId: nodes[0].record.id,
  });
  expect(restarted.authenticate(nodes[49].token)?.nodeName).toBe('n49');
  expect(restarted.authenticate(nodes[3].token)).toBeUndefined();
  expect(restarted.authenticate(nodes[7].token)).toBeUndefined();
  expect(restarted.list()).toHaveLength(1 + 50 - 2);
  for (const f of [join(dir, 'tokens.json'), ...logs().map((l) => join(dir, l))]) {
    expect(statSync(f).mode & 0o777, f).toBe(0o600);
  }
});

it('a join appends one line instead of rewriting every credential', () => {
  const store = open();
  store.ensureAdminToken();
  store.create({ name: 'node:first', role: 'node', nodeName: 'first' });
  const snapshotBefore = readFileSync(join(dir, 'tokens.json'), 'utf8');
  for (let i = 0; i < 20; i++) store.create({ name: `node:n${i}`, role: 'node', nodeName: `n${i}` });
  expect(readFileSync(join(dir, 'tokens.json'), 'utf8')).toBe(snapshotBefore);
  expect(logs()).toHaveLength(1);
  expect(readFileSync(join(dir, logs()[0]), 'utf8').trim().split('\n')).toHaveLength(21);
});

it('folds a long log into the snapshot, so a restart reads few lines', () => {
  const store = open();
  const tokens = Array.from({ length: 2500 }, (_, i) =>
    store.create({ name: `n${i}`, role: 'node', nodeName: `n${i}` }),
  );
  const logLines = readFileSync(join(dir, logs()[0]), 'utf8').trim().split('\n').length;
  expect(logLines).toBeLessThanOrEqual(1000);
  expect(logs()).toHaveLength(1);
  const restarted = open();
  expect(restarted.list()).toHaveLength(2500);
  expect(restarted.authenticate(tokens[0].token)?.nodeName).toBe('n0');
  expect(restarted.authenticate(tokens[2499].token)?.nodeName).toBe('n2499');
});

it('a crash between writing the snapshot and removing the old log does not bring a deleted token back', () => {
  const store = open();
  store.ensureAdminToken();
  const doomed = store.create({ name: 'node:gone', role: 'node', nodeName: 'gone' });
  const [oldLog] = logs();
  const saved = join(dir, 'saved.log.bak');
  copyFileSync(join(dir, oldLog), saved);
  store.delete(doomed.record.id);
  expect(existsSync(join(dir, oldLog))).toBe(false);
  // The old log is still there, as if the server died right after the snapshot's rename.
  copyFileSync(saved, join(dir, oldLog));
  expect(open().authenticate(doomed.token)).toBeUndefined();
});

it('a line torn by a crash mid-append loses only that line', () => {
  const store = open();
  const kept = store.create({ name: 'node:kept', role: 'node', nodeName: 'kept' });
  const before = store.create({ name: 'node:before', role: 'node', nodeName: 'before' });
  appendFileSync(join(dir, logs()[0] ?? 'tokens.1.log'), '{"id":"abcdef","hash":"12');
  const restarted = open();
  expect(restarted.authenticate(kept.token)?.nodeName).toBe('kept');
  expect(restarted.authenticate(before.token)?.nodeName).toBe('before');
  // And the store goes on appending after the torn line.
  const after = restarted.create({ name: 'node:after', role: 'node', nodeName: 'after' });
  expect(open().authenticate(after.token)?.nodeName).toBe('after');
});

it('reads a tokens.json written by an earlier version (no log)', () => {
  const first = open();
  const admin = first.ensureAdminToken();
  const records = first.list();
  rmSync(dir, { recursive: true, force: true });
  dir = mkdtempSync(join(tmpdir(), 'kubelab-tokens-'));
  writeFileSync(join(dir, 'tokens.json'), JSON.stringify({ tokens: records }, null, 2) + '\n', {
    mode: 0o600,
  });
  const store = open();
  expect(store.authenticate(admin)?.role).toBe('admin');
  const joined = store.create({ name: 'node:new', role: 'node', nodeName: 'new' });
  const restarted = open();
  expect(restarted.authenticate(admin)?.role).toBe('admin');
  expect(restarted.authenticate(joined.token)?.nodeName).toBe('new');
});

it('replicas sharing a data folder see each other’s tokens, and a deletion keeps the other’s new ones', () => {
  const a = open();
  const b = open();
  const fromA = a.create({ name: 'node:a', role: 'node', nodeName: 'a' });
  expect(b.authenticate(fromA.token)?.nodeName).toBe('a');
  const fromB = b.create({ name: 'node:b', role: 'node', nodeName: 'b' });
  const other = a.create({ name: 'node:c', role: 'node', nodeName: 'c' });
  // b deletes c (issued by a after b last read): a's and b's other tokens survive.
  expect(b.delete(other.record.id)).toBe(true);
  const restarted = open();
  expect(restarted.authenticate(fromA.token)?.nodeName).toBe('a');
  expect(restarted.authenticate(fromB.token)?.nodeName).toBe('b');
  expect(restarted.authenticate(other.token)).toBeUndefined();
});

it('a deletion through one replica reaches the other within a recheck, with no request needed', () => {
  const clock = new FakeClock();
  const a = new TokenStore(dir, clock);
  const b = new TokenStore(dir, clock);
  const viewer = a.create({ name: 'housemate', role: 'viewer' });
  // b has verified the token (and remembers it), and a watch is open with it on b.
  const identity = b.authenticate(viewer.token)!;
  expect(identity).toMatchObject({ role: 'viewer', tokenId: viewer.record.id });
  const ended: string[] = [];
  b.revocations.whenRevoked(identity, () => ended.push('watch on b'));
  b.startWatchingFiles();
  try {
    expect(a.delete(viewer.record.id)).toBe(true);
    clock.advance(FILES_RECHECK_MS);
    expect(ended).toEqual(['watch on b']);
    expect(b.authenticate(viewer.token)).toBeUndefined();
  } finally {
    b.stopWatchingFiles();
  }
});

it('tells what was opened with a token that it was deleted, or its node revoked, at once', () => {
  const store = new TokenStore(dir, new FakeClock());
  const viewer = store.create({ name: 'v', role: 'viewer' });
  const node = store.create({ name: 'system:node:pi', role: 'node', nodeName: 'pi' });
  const kept = store.create({ name: 'k', role: 'viewer' });
  const ended: string[] = [];
  for (const [what, t] of [
    ['viewer', viewer],
    ['node', node],
    ['kept', kept],
  ] as const) {
    store.revocations.whenRevoked(store.authenticate(t.token)!, () => ended.push(what));
  }
  const forgotten = store.revocations.whenRevoked(store.authenticate(kept.token)!, () =>
    ended.push('stream that ended by itself'),
  );
  forgotten();
  store.delete(viewer.record.id);
  expect(ended).toEqual(['viewer']);
  store.revokeNode('pi');
  expect(ended).toEqual(['viewer', 'node']);
  store.delete(kept.record.id);
  expect(ended).toEqual(['viewer', 'node', 'kept']);
  expect(store.revocations.waiting).toBe(0);
});

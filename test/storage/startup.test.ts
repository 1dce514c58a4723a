/**
 * Starting the store after a crash or a power loss: a lock left behind does not block the start
 * once its pid names another process (pids are reused, after a reboot most of all), while a
 * live server's lock still does; the database and its WAL are the owner's only, whatever the
 * umask was.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { currentBootId, processStartTime } from '../../client/util/procfs.js';
import { openSqliteStorage } from '../../main/storage/sqlite.js';
import { eventually } from '../support/wait.js';

const REPO = join(import.meta.dirname, '..', '..');
const STORE_HOLDER = join(REPO, 'test', 'support', 'storeholder.ts');

const dirs: string[] = [];
const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function dataDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'kubelab-startup-'));
  dirs.push(d);
  return d;
}

/** Some other live process (not a kubelab server): what a reused pid names. */
function otherProcess(): ChildProcess & { pid: number } {
  const child = spawn('sleep', ['600'], { stdio: 'ignore' });
  children.push(child);
  return child as ChildProcess & { pid: number };
}

/** A kubelab store open in another process; resolves once it holds the lock. */
async function storeInAnotherProcess(path: string): Promise<ChildProcess & { pid: number }> {
  const child = spawn(process.execPath, ['--import', 'tsx', STORE_HOLDER, path], {
    cwd: REPO,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  await eventually(
    () => out.includes('open') || child.exitCode !== null,
    'the other process to open the store',
  );
  expect(out).toContain('open');
  return child as ChildProcess & { pid: number };
}

async function killed(child: ChildProcess): Promise<void> {
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await exited;
}

let starts = 0;

/** Opens the store, writes, and closes it: the start succeeded. */
async function startsAndWrites(path: string): Promise<void> {
  const store = await openSqliteStorage({ path, compactIntervalMs: 0 });
  try {
    await store.create(`/started/${++starts}`, 'yes');
    expect(readFileSync(`${path}.lock`, 'utf8')).toContain(String(process.pid));
  } finally {
    await store.close();
  }
  expect(existsSync(`${path}.lock`)).toBe(false);
}

describe('the store lock after a crash', () => {
  it('does not block the start when the pid of an earlier version’s lock now names another process', async () => {
    const path = join(dataDir(), 'state.db');
    const other = otherProcess();
    // Written (a bare pid) by a server that crashed an hour ago; the pid went to `sleep` since.
    writeFileSync(`${path}.lock`, String(other.pid));
    const anHourAgo = Date.now() / 1000 - 3600;
    utimesSync(`${path}.lock`, anHourAgo, anHourAgo);
    await startsAndWrites(path);
  });

  it('does not block the start when the pid of a crashed server now names another process', async () => {
    const path = join(dataDir(), 'state.db');
    const holder = await storeInAnotherProcess(path);
    const lock = readFileSync(`${path}.lock`, 'utf8');
    await killed(holder); // kill -9: the lock stays behind
    expect(existsSync(`${path}.lock`)).toBe(true);
    // Its pid goes to another process (the lock is left as it was but for the pid).
    const other = otherProcess();
    writeFileSync(`${path}.lock`, lock.replace(String(holder.pid), String(other.pid)));
    await startsAndWrites(path);
  });

  it.skipIf(!currentBootId())(
    'does not block the start after a reboot, even when the pid and its start time match again',
    async () => {
      const path = join(dataDir(), 'state.db');
      const other = otherProcess();
      writeFileSync(
        `${path}.lock`,
        JSON.stringify({ pid: other.pid, startTime: processStartTime(other.pid), bootId: 'an-earlier-boot' }),
      );
      await startsAndWrites(path);
    },
  );

  it('does not block the start when the lock was torn (empty or cut short)', async () => {
    const path = join(dataDir(), 'state.db');
    for (const torn of ['', '{"pid":12']) {
      writeFileSync(`${path}.lock`, torn);
      await startsAndWrites(path);
    }
  });

  it('still blocks the start while the server that holds it runs, naming its pid', async () => {
    const path = join(dataDir(), 'state.db');
    const holder = await storeInAnotherProcess(path);
    await expect(openSqliteStorage({ path, compactIntervalMs: 0 })).rejects.toThrow(
      new RegExp(
        `in use by another kubelab server \\(pid ${holder.pid}\\); stop it or choose another --data-dir`,
      ),
    );
    await killed(holder);
    await startsAndWrites(path);
  });
});

describe('the database files', () => {
  it('are 0600 in a 0700 folder whatever the umask, and an earlier version’s wider modes are narrowed', async () => {
    const folder = join(dataDir(), 'cluster');
    const path = join(folder, 'state.db');
    const umask = process.umask(0);
    try {
      const store = await openSqliteStorage({ path, compactIntervalMs: 0 });
      try {
        await store.create('/a', 'b');
        expect(statSync(folder).mode & 0o777).toBe(0o700);
        for (const file of [path, `${path}-wal`, `${path}-shm`, `${path}.lock`])
          expect(statSync(file).mode & 0o777, file).toBe(0o600);
      } finally {
        await store.close();
      }
      for (const file of [path, `${path}-wal`, `${path}-shm`]) if (existsSync(file)) chmodSync(file, 0o644);
      const reopened = await openSqliteStorage({ path, compactIntervalMs: 0 });
      try {
        await reopened.create('/c', 'd');
        for (const file of [path, `${path}-wal`, `${path}-shm`])
          expect(statSync(file).mode & 0o777, file).toBe(0o600);
      } finally {
        await reopened.close();
      }
    } finally {
      process.umask(umask);
    }
  });
});

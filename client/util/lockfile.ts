/**
 * One process owns a data folder or file: a lock file says which — its pid, the pid's start
 * time, the boot it ran in and the host name. After a crash or a power loss the lock stays
 * behind, and its pid may since have been given to another process; so the lock counts only
 * while that pid still names the process that wrote it (same boot, same start time). The
 * control plane locks its database with it, the agent its data folder.
 */
import { hostname } from 'node:os';
import { readFileSync, rmSync, statSync } from 'node:fs';
import { createFileAtomic } from './atomicfile.js';
import { currentBootId, isSameProcess, processStartTime, processStartedAt } from './procfs.js';

/** What a lock file records about its holder. */
export interface LockHolder {
  pid: number;
  /** procfs.ts's start time; absent where it cannot be read (Windows). */
  startTime?: string;
  /** Linux's boot id: a start time is only comparable within one boot. */
  bootId?: string;
  host?: string;
}

const CLOCK_SLACK_MS = 5_000;

/** Lock files held by this process (a second holder in the same process must be refused too). */
const held = new Set<string>();

/**
 * Takes the lock file `lockPath`, or throws what `inUse` makes of the live holder; returns the
 * release (which deletes the file).
 */
export function takeLockFile(lockPath: string, inUse: (holder: LockHolder) => Error): () => void {
  if (held.has(lockPath)) throw inUse({ pid: process.pid });
  const me: LockHolder = {
    pid: process.pid,
    startTime: processStartTime(process.pid),
    bootId: currentBootId(),
    host: hostname(),
  };
  for (let attempt = 1; ; attempt++) {
    try {
      // Created whole or not at all: a process starting at the same moment never reads half a lock.
      createFileAtomic(lockPath, JSON.stringify(me) + '\n');
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= 3) throw err;
      const holder = liveHolder(lockPath);
      if (holder) throw inUse(holder);
      rmSync(lockPath, { force: true }); // Left by a process that is gone.
    }
  }
  held.add(lockPath);
  return () => {
    held.delete(lockPath);
    rmSync(lockPath, { force: true });
  };
}

/** "pid 1234", or "pid 1234 on otherhost" when the holder wrote it on another machine (a shared folder). */
export function describeHolder(holder: LockHolder): string {
  const host = holder.host && holder.host !== hostname() ? ` on ${holder.host}` : '';
  return `pid ${holder.pid}${host}`;
}

/** The holder named in the lock file when it is still running, else undefined (the lock is stale). */
function liveHolder(lock: string): LockHolder | undefined {
  let text: string;
  let writtenAt: number;
  try {
    text = readFileSync(lock, 'utf8').trim();
    writtenAt = statSync(lock).mtimeMs;
  } catch {
    return undefined; // Removed meanwhile.
  }
  const holder = parseHolder(text);
  // Empty or garbled: torn by a crash while it was written (before writes were atomic).
  if (!holder) return undefined;
  // Not this process: it would be in `held`. The pid was reused (e.g. after a reboot).
  if (holder.pid === process.pid) return undefined;
  if (holder.bootId && currentBootId() && holder.bootId !== currentBootId()) return undefined;
  if (holder.startTime !== undefined) return isSameProcess(holder.pid, holder.startTime) ? holder : undefined;
  if (process.platform === 'win32') {
    // Windows has neither /proc nor ps to tell a reused pid from the holder: whether the pid
    // is alive is the best available check (a stale lock whose pid was reused then blocks
    // the start, and the error says to delete it).
    return isAlive(holder.pid) ? holder : undefined;
  }
  // A lock of an earlier version (a bare pid): its writer had started before writing it, so a
  // process that started later under that pid is another one. The slack absorbs a wall clock
  // set forward since (it moves the boot time the start is computed from).
  const startedAt = processStartedAt(holder.pid);
  return startedAt !== undefined && startedAt <= writtenAt + CLOCK_SLACK_MS ? holder : undefined;
}

function parseHolder(text: string): LockHolder | undefined {
  if (/^\d+$/.test(text)) return { pid: Number(text) };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  const h = parsed as Partial<LockHolder> | null;
  if (!h || !Number.isSafeInteger(h.pid) || (h.pid as number) <= 0) return undefined;
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  return { pid: h.pid as number, startTime: str(h.startTime), bootId: str(h.bootId), host: str(h.host) };
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

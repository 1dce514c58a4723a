/**
 * Telling whether a pid still names the process that was recorded with it. Pids are reused, so
 * a pid alone proves nothing after a restart: the agent's runtime (its pods) and the control
 * plane's store lock record the process's start time with its pid and only trust a pid whose
 * start time still matches. Windows has neither /proc nor ps: callers check what they can there.
 *
 * Linux: field 22 of /proc/<pid>/stat (starttime, clock ticks since boot) — a synchronous read
 * of a kernel pseudo-file, a few microseconds. Elsewhere (macOS has no /proc):
 * `ps -o stat=,lstart= -p <pid>`, synchronously; lstart has one-second resolution, so there a pid
 * reused within the same second as the original start would go unnoticed (pid reuse that fast
 * needs the whole pid space to wrap around in that second).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

export interface ProcessInfo {
  /** Opaque, only compared for equality: /proc starttime ticks, or ps's lstart text. */
  startTime: string;
  /** Exited but not yet reaped by its parent: it is gone, only its pid is still held. */
  zombie: boolean;
}

const hasProc = (() => {
  try {
    readFileSync('/proc/self/stat');
    return true;
  } catch {
    return false;
  }
})();

/** What the kernel says about `pid` now, or undefined when no such process exists. */
export function processInfo(pid: number): ProcessInfo | undefined {
  if (!Number.isSafeInteger(pid) || pid <= 0) return undefined;
  return hasProc ? procInfo(pid) : processInfoFromPs(pid);
}

/** The start time of `pid`, or undefined when no such process exists. */
export function processStartTime(pid: number): string | undefined {
  return processInfo(pid)?.startTime;
}

/**
 * True while the process that started at `startTime` still runs under `pid`. False when the pid
 * is free, names another process (the pid was reused: start times differ), or names a zombie
 * (the process exited; only its parent has not collected it yet).
 */
export function isSameProcess(pid: number, startTime: string): boolean {
  const info = processInfo(pid);
  return info !== undefined && !info.zombie && info.startTime === startTime;
}

/**
 * Parses /proc/<pid>/stat. The second field is the command name in parentheses, and the name
 * itself may hold spaces and parentheses ("(sd-pam)", "a) b"), so fields are counted from the
 * LAST ')': after it come field 3 (state) onwards.
 */
export function parseProcStat(stat: string): ProcessInfo | undefined {
  const close = stat.lastIndexOf(')');
  if (close < 0) return undefined;
  const fields = stat
    .slice(close + 1)
    .trim()
    .split(/\s+/);
  const state = fields[0]; // field 3
  const startTime = fields[22 - 3]; // field 22
  if (!state || !startTime || !/^\d+$/.test(startTime)) return undefined;
  return { startTime, zombie: state === 'Z' || state === 'X' };
}

function procInfo(pid: number): ProcessInfo | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined; // ENOENT: no such process (ESRCH on a race with its exit)
  }
  return parseProcStat(stat);
}

/** The fallback where there is no /proc (exported to test it on Linux too). */
export function processInfoFromPs(pid: number): ProcessInfo | undefined {
  let out: string;
  try {
    out = execFileSync('ps', ['-o', 'stat=,lstart=', '-p', String(pid)], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
  } catch {
    return undefined; // ps exits 1 when the pid does not exist
  }
  const match = /^\s*(\S+)\s+(.+?)\s*$/.exec(out);
  if (!match) return undefined;
  return { startTime: match[2], zombie: match[1].startsWith('Z') };
}

/**
 * Linux's identifier of the current boot (/proc/sys/kernel/random/boot_id), or undefined
 * elsewhere. A /proc start time counts from boot, so it names a process only within one boot.
 */
export function currentBootId(): string | undefined {
  if (!hasProc) return undefined;
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

/**
 * When `pid` started, in milliseconds since the epoch, rounded down (so never later than the
 * real start), or undefined when no such process exists. Linux: boot time (/proc/stat btime,
 * whole seconds) plus the /proc start time in clock ticks, at the USER_HZ of 100 that Linux
 * gives every mainstream architecture; elsewhere ps's lstart, read in the C locale.
 */
export function processStartedAt(pid: number): number | undefined {
  if (!Number.isSafeInteger(pid) || pid <= 0) return undefined;
  if (!hasProc) return startedAtFromPs(pid);
  const info = procInfo(pid);
  const btime = /^btime (\d+)$/m.exec(readFileSync('/proc/stat', 'utf8'))?.[1];
  if (!info || !btime) return undefined;
  return Number(btime) * 1000 + Math.floor((Number(info.startTime) * 1000) / USER_HZ);
}

const USER_HZ = 100;

function startedAtFromPs(pid: number): number | undefined {
  try {
    const out = execFileSync('ps', ['-o', 'lstart=', '-p', String(pid)], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      env: { ...process.env, LC_ALL: 'C' },
    });
    const at = Date.parse(out.trim());
    return Number.isNaN(at) ? undefined : at;
  } catch {
    return undefined;
  }
}

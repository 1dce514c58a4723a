/**
 * CPU used by each process of a case (this process, the control-plane child, etcd), from
 * /proc: on a 2-core machine it tells which process was the bottleneck. Linux only; NaN elsewhere.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

const CLOCK_TICKS = 100; // USER_HZ on every Linux build that matters

/** utime + stime of every thread of `pid`, in seconds. */
export function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may contain spaces), starting at field 3 (state).
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(rest[11]) + Number(rest[12])) / CLOCK_TICKS;
  } catch {
    return NaN;
  }
}

/** The pid of the process whose command line contains `needle` (e.g. a unique data folder). */
export function findPid(needle: string): number | undefined {
  try {
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
        if (cmdline.includes(needle)) return Number(entry);
      } catch {
        // the process ended meanwhile
      }
    }
  } catch {
    // no /proc
  }
  return undefined;
}

/** Cores used by each named process between `start()` and the returned function's call. */
export type CpuShare = Record<string, number>;

export function cpuMeter(pids: Record<string, number | undefined>): () => CpuShare {
  const t0 = performance.now();
  const before = Object.fromEntries(
    Object.entries(pids).map(([name, pid]) => [name, pid ? cpuSeconds(pid) : NaN]),
  );
  return () => {
    const seconds = (performance.now() - t0) / 1000;
    return Object.fromEntries(
      Object.entries(pids).map(([name, pid]) => [
        name,
        pid ? (cpuSeconds(pid) - before[name]) / seconds : NaN,
      ]),
    );
  };
}

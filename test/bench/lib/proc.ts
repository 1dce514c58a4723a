/**
 * Memory and CPU of other processes from /proc (Linux only; NaN elsewhere), sampled over a
 * window: RSS split into anonymous memory (the process's own) and file-backed pages (the
 * executable and libraries mapped from the page cache), and CPU time as a share of one core.
 */
import { readFileSync, readlinkSync } from 'node:fs';
import { cpuSeconds } from './cpu.js';
import { median, nowMs } from './stats.js';

const KIB = 1024;

export interface MemoryReading {
  /** VmRSS, bytes. */
  rss: number;
  /** RssAnon: heap, stacks, V8's pages, malloc arenas. */
  anon: number;
  /** RssFile: pages of the executable and shared libraries mapped from the page cache. */
  file: number;
  threads: number;
}

/** VmRSS, RssAnon, RssFile and Threads from /proc/<pid>/status. */
export function memoryOf(pid: number): MemoryReading {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const field = (name: string) => {
      const m = new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status);
      return m ? Number(m[1]) : NaN;
    };
    return {
      rss: field('VmRSS') * KIB,
      anon: field('RssAnon') * KIB,
      file: field('RssFile') * KIB,
      threads: field('Threads'),
    };
  } catch {
    return { rss: NaN, anon: NaN, file: NaN, threads: NaN };
  }
}

/**
 * Resident memory by mapping, grouped: the executable's code (r-x), its read-only data (r--:
 * V8's and Node's startup snapshots, ICU's data, a single executable's script), its symbol
 * tables (the first r-- segment), shared libraries, malloc's [heap],
 * anonymous mappings (V8's heap pages, thread stacks, other malloc arenas), and the rest.
 * Values in bytes.
 */
export function residentByMapping(pid: number | 'self' = 'self'): Record<string, number> {
  const out: Record<string, number> = {};
  let text: string;
  let exe = '';
  try {
    text = readFileSync(`/proc/${pid}/smaps`, 'utf8');
    exe = readlinkSync(`/proc/${pid}/exe`);
  } catch {
    return out;
  }
  let group = 'other';
  for (const line of text.split('\n')) {
    const head = /^[0-9a-f]+-[0-9a-f]+ (\S+) ([0-9a-f]+) \S+ \S+\s*(.*)$/.exec(line);
    if (head) {
      const [, perms, offset, name] = head;
      if (name && name === exe) {
        if (perms.includes('x')) group = 'executable: code';
        else if (perms.includes('w')) group = 'executable: writable data';
        else if (/^0+$/.test(offset)) group = 'executable: ELF headers, dynamic symbols';
        else group = 'executable: read-only data';
      } else if (/\.so(\.|$)/.test(name)) group = 'shared libraries';
      else if (name === '[heap]') group = 'malloc [heap]';
      else if (name === '[stack]') group = 'main thread stack';
      else if (name === '') group = 'anonymous mappings';
      else group = 'other';
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) out[group] = (out[group] ?? 0) + Number(rss[1]) * KIB;
  }
  return out;
}

/** CPU-seconds the whole machine spent busy (all cores; /proc/stat, not idle and not iowait). */
export function machineBusySeconds(): number {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0];
    const v = line.trim().split(/\s+/).slice(1).map(Number);
    const total = v.slice(0, 8).reduce((a, b) => a + b, 0);
    return (total - v[3] - v[4]) / 100;
  } catch {
    return NaN;
  }
}

export interface ProcSample {
  /** ms since the sampler started. */
  t: number;
  cpu: number;
  mem: MemoryReading;
}

export interface ProcSummary {
  samples: number;
  seconds: number;
  /** CPU seconds used in the window ÷ wall seconds × 100: percent of one core. */
  cpuPct: number;
  rssMedian: number;
  rssMax: number;
  rssMin: number;
  anonMedian: number;
  fileMedian: number;
  threads: number;
  /** RSS of the last sample minus the first (growth over the window). */
  rssGrowth: number;
}

export interface MachineLoad {
  /** Cores busy on the whole machine over the window. */
  busyCores: number;
  /** Of which the sampled processes (and this one). */
  oursCores: number;
  /** Everything else: other people's work on a shared machine. */
  othersCores: number;
}

/** Samples a set of processes every `intervalMs`; summaries cover [fromMs, toMs] since start. */
export class ProcSampler {
  readonly samples = new Map<string, ProcSample[]>();
  /** [ms since start, machine busy CPU-seconds, this process's CPU-seconds]. */
  private readonly machine: Array<[number, number, number]> = [];
  private readonly timer: NodeJS.Timeout;
  readonly t0 = nowMs();

  constructor(
    private readonly pids: Map<string, number>,
    intervalMs: number,
  ) {
    this.sample();
    this.timer = setInterval(() => this.sample(), intervalMs);
  }

  add(name: string, pid: number): void {
    this.pids.set(name, pid);
  }

  /** ms since the sampler started. */
  elapsed(): number {
    return nowMs() - this.t0;
  }

  sample(): void {
    const t = this.elapsed();
    this.machine.push([t, machineBusySeconds(), cpuSeconds(process.pid)]);
    for (const [name, pid] of this.pids) {
      const cpu = cpuSeconds(pid);
      if (!Number.isFinite(cpu)) continue; // gone
      const list = this.samples.get(name) ?? [];
      list.push({ t, cpu, mem: memoryOf(pid) });
      this.samples.set(name, list);
    }
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** How busy the machine was over [fromMs, toMs], and how much of it was not us. */
  machineLoad(fromMs = 0, toMs = Infinity): MachineLoad | undefined {
    const m = this.machine.filter(([t]) => t >= fromMs && t <= toMs);
    if (m.length < 2) return undefined;
    const [t0, busy0, self0] = m[0];
    const [t1, busy1, self1] = m[m.length - 1];
    const seconds = (t1 - t0) / 1000;
    let ours = self1 - self0;
    for (const list of this.samples.values()) {
      const s = list.filter((x) => x.t >= t0 && x.t <= t1);
      if (s.length >= 2) ours += s[s.length - 1].cpu - s[0].cpu;
    }
    const busyCores = (busy1 - busy0) / seconds;
    const oursCores = ours / seconds;
    return { busyCores, oursCores, othersCores: Math.max(0, busyCores - oursCores) };
  }

  summary(name: string, fromMs = 0, toMs = Infinity): ProcSummary | undefined {
    const all = this.samples.get(name) ?? [];
    const s = all.filter((x) => x.t >= fromMs && x.t <= toMs);
    if (s.length < 2) return undefined;
    const first = s[0];
    const last = s[s.length - 1];
    const seconds = (last.t - first.t) / 1000;
    const rss = s.map((x) => x.mem.rss);
    return {
      samples: s.length,
      seconds,
      cpuPct: ((last.cpu - first.cpu) / seconds) * 100,
      rssMedian: median(rss),
      rssMax: Math.max(...rss),
      rssMin: Math.min(...rss),
      anonMedian: median(s.map((x) => x.mem.anon)),
      fileMedian: median(s.map((x) => x.mem.file)),
      threads: last.mem.threads,
      rssGrowth: last.mem.rss - first.mem.rss,
    };
  }
}

export const MiB = 1024 * 1024;

/**
 * The machine reader for macOS, Windows and anything else Node runs on, through Node's `os` and
 * `fs.statfs` and systeminformation. It also works on Linux (its tests run there), but the Linux
 * reader is cheaper and reports more.
 *
 * What one sample costs (child processes are systeminformation's, measured or read from its
 * source, 5.33):
 * - memory: `si.mem()` reads /proc/meminfo on Linux (no child process); on macOS it runs
 *   `sysctl` (synchronously), `vm_stat` and `sysctl` again, which is the price of a truthful
 *   "available" there (os.freemem() counts only free pages). On Windows si.mem() would start
 *   PowerShell for swap figures we do not use, so `os.freemem()` (GlobalMemoryStatusEx's
 *   available physical memory, which is what si.mem() reports too) is read directly.
 * - nodefs: `fs.promises.statfs` (libuv; Linux, macOS and Windows), no child process.
 *   `si.fsSize()` runs `df` (PowerShell on Windows) on every call, so it is only the fallback
 *   when statfs fails, or the source when `nodefs: 'fsSize'` is asked for.
 * - CPU: `os.cpus()` deltas; load: `os.loadavg()` (always 0 on Windows).
 * - network: `si.networkStats()` costs one child process per interface on Linux, two on macOS
 *   and PowerShell plus a WMI query per interface on Windows (40–100 ms a refresh on the Linux
 *   build machine, far more on Windows). Counters are therefore refreshed at most every `networkRefreshMs` (default 60 s)
 *   in the background; samples in between repeat the last counters.
 * - not reported (undefined): processes and processLimit (systeminformation can count them
 *   only by listing every process); inodes on Windows (statfs gives none) and whenever nodefs
 *   comes from si.fsSize().
 *
 * info() runs once and may spend half a second in systeminformation (osInfo, system, uuid).
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Systeminformation } from 'systeminformation';
import { goArch, goOS, internalIPs, nodefsFromStatfs, statfsNearest } from './common.js';
import type { MachineInfo, MachineReader, MachineSample } from './types.js';

type SI = typeof import('systeminformation');

let siModule: Promise<SI> | undefined;
/** systeminformation, loaded on first use so that importing this module costs nothing. */
function loadSI(): Promise<SI> {
  siModule ??= import('systeminformation').then((m) => m.default);
  return siModule;
}

export interface PortableMachineReaderOptions {
  /** The agent's data directory: nodefs is the filesystem holding it (it need not exist yet). */
  dataDir: string;
  /** Clock for `MachineSample.at` and for the network refresh interval (default `Date.now`). */
  now?: () => number;
  /**
   * The longest time (by `now`) network counters are reused before a refresh starts in the
   * background (default 60 s; 0: every sample).
   */
  networkRefreshMs?: number;
  /** Where nodefs figures come from: `statfs` (default; falls back to fsSize) or `fsSize`. */
  nodefs?: 'statfs' | 'fsSize';
}

interface Nodefs {
  availableBytes: number;
  capacityBytes: number;
  inodesFree?: number;
  inodes?: number;
}

interface CpuTotals {
  busy: number;
  total: number;
  cpus: number;
}

export class PortableMachineReader implements MachineReader {
  private readonly dataDir: string;
  private readonly now: () => number;
  private readonly networkRefreshMs: number;
  private readonly nodefsSource: 'statfs' | 'fsSize';
  private lastCpu?: CpuTotals;
  private lastCpuUsage = 0;
  private network?: { receiveBytes: number; transmitBytes: number };
  private networkStartedAt = -Infinity;
  private networkRefresh?: Promise<void>;

  constructor(opts: PortableMachineReaderOptions) {
    this.dataDir = opts.dataDir;
    this.now = opts.now ?? Date.now;
    this.networkRefreshMs = opts.networkRefreshMs ?? 60_000;
    this.nodefsSource = opts.nodefs ?? 'statfs';
  }

  async info(): Promise<MachineInfo> {
    this.lastCpu ??= cpuTotals(os.cpus());
    const si = await loadSI();
    const [osInfo, system, uuid, memoryTotalBytes, fs] = await Promise.all([
      si.osInfo(),
      si.system(),
      si.uuid(),
      this.memory().then((m) => m.total),
      this.nodefs(),
    ]);
    const machineID = (uuid.os ?? '').trim();
    return {
      hostname: os.hostname(),
      internalIPs: internalIPs(),
      machineID,
      systemUUID: (system.uuid || uuid.hardware || '').trim(),
      bootID: await bootID(machineID),
      kernelVersion: os.release(),
      osImage: osImage(osInfo),
      operatingSystem: goOS(),
      architecture: goArch(),
      // si.cpu() would run lscpu and dmidecode (sysctl, WMI elsewhere) for the same count.
      cpuCores: os.availableParallelism(),
      memoryTotalBytes,
      nodefsCapacityBytes: fs.capacityBytes,
    };
  }

  async sample(): Promise<MachineSample> {
    const at = this.now();
    const cpu = cpuTotals(os.cpus());
    const [load1, load5, load15] = os.loadavg();
    const [memory, fs, network] = await Promise.all([this.memory(), this.nodefs(), this.networkCounters()]);

    if (this.lastCpu) {
      const usage = cpuUsage(this.lastCpu, cpu);
      if (usage !== undefined) {
        this.lastCpuUsage = usage;
        this.lastCpu = cpu;
      }
    } else {
      this.lastCpu = cpu;
    }

    return {
      at,
      memoryAvailableBytes: memory.available,
      memoryTotalBytes: memory.total,
      nodefsAvailableBytes: fs.availableBytes,
      nodefsCapacityBytes: fs.capacityBytes,
      nodefsInodesFree: fs.inodesFree,
      nodefsInodes: fs.inodes,
      processes: undefined,
      processLimit: undefined,
      cpuUsageCores: this.lastCpuUsage,
      load1,
      load5,
      load15,
      networkReceiveBytes: network.receiveBytes,
      networkTransmitBytes: network.transmitBytes,
    };
  }

  private async memory(): Promise<{ total: number; available: number }> {
    if (process.platform === 'win32') return { total: os.totalmem(), available: os.freemem() };
    const mem = await (await loadSI()).mem();
    return { total: mem.total, available: mem.available };
  }

  private async nodefs(): Promise<Nodefs> {
    if (this.nodefsSource === 'statfs') {
      try {
        return nodefsFromStatfs(await statfsNearest(this.dataDir));
      } catch {
        // fall through to systeminformation
      }
    }
    const mounts = await (await loadSI()).fsSize();
    const mount = pickMount(mounts, await existingAncestor(this.dataDir));
    if (!mount) throw new Error(`no mounted filesystem holds ${this.dataDir}`);
    return { availableBytes: mount.available, capacityBytes: mount.size };
  }

  /**
   * The last network counters; a refresh starts in the background once they are
   * `networkRefreshMs` old. Only the very first call waits for one.
   */
  private async networkCounters(): Promise<{ receiveBytes: number; transmitBytes: number }> {
    const now = this.now();
    if (!this.networkRefresh && now - this.networkStartedAt >= this.networkRefreshMs) {
      this.networkStartedAt = now;
      this.networkRefresh = this.refreshNetwork().finally(() => {
        this.networkRefresh = undefined;
      });
    }
    if (!this.network) await this.networkRefresh;
    return this.network ?? { receiveBytes: 0, transmitBytes: 0 };
  }

  private async refreshNetwork(): Promise<void> {
    try {
      const names = Object.entries(os.networkInterfaces())
        .filter(([, addrs]) => addrs?.some((a) => !a.internal))
        .map(([name]) => name);
      if (!names.length) {
        this.network = { receiveBytes: 0, transmitBytes: 0 };
        return;
      }
      const stats = await (await loadSI()).networkStats(names.join(','));
      this.network = {
        receiveBytes: stats.reduce((sum, s) => sum + (s.rx_bytes || 0), 0),
        transmitBytes: stats.reduce((sum, s) => sum + (s.tx_bytes || 0), 0),
      };
    } catch {
      // keep the last counters; the next refresh tries again
      this.network ??= { receiveBytes: 0, transmitBytes: 0 };
    }
  }
}

/**
 * The mount holding `dir`: the longest mount point that is `dir` or one of its ancestors.
 * Windows mounts (`C:`, `C:\`) and paths compare case-insensitively, with either separator.
 */
export function pickMount(
  mounts: Systeminformation.FsSizeData[],
  dir: string,
): Systeminformation.FsSizeData | undefined {
  const norm = (p: string) => {
    let s = p.replace(/\\/g, '/');
    if (/^[a-zA-Z]:/.test(s)) s = s.toLowerCase();
    return s.length > 1 ? s.replace(/\/+$/, '') : s;
  };
  const target = norm(dir);
  let best: Systeminformation.FsSizeData | undefined;
  let bestLength = -1;
  for (const m of mounts) {
    if (!m.mount) continue;
    const mount = norm(m.mount);
    const holds = target === mount || target.startsWith(mount.endsWith('/') ? mount : `${mount}/`);
    if (holds && mount.length > bestLength) {
      best = m;
      bestLength = mount.length;
    }
  }
  return best;
}

async function existingAncestor(dir: string): Promise<string> {
  let p = path.resolve(dir);
  for (;;) {
    try {
      return await fsp.realpath(p);
    } catch {
      const parent = path.dirname(p);
      if (parent === p) return p;
      p = parent;
    }
  }
}

function cpuTotals(cpus: os.CpuInfo[]): CpuTotals {
  let busy = 0;
  let total = 0;
  for (const { times } of cpus) {
    const b = times.user + times.nice + times.sys + times.irq;
    busy += b;
    total += b + times.idle;
  }
  return { busy, total, cpus: Math.max(cpus.length, 1) };
}

function cpuUsage(prev: CpuTotals, cur: CpuTotals): number | undefined {
  const total = cur.total - prev.total;
  if (total <= 0) return undefined;
  const busy = Math.min(Math.max(cur.busy - prev.busy, 0), total);
  return (busy / total) * cur.cpus;
}

function osImage(info: Systeminformation.OsData): string {
  const distro = (info.distro || '').trim();
  const release = (info.release || '').trim();
  if (!distro) return release || os.type();
  return !release || distro.includes(release) ? distro : `${distro} ${release}`;
}

/**
 * A per-boot identifier, as the kubelet reports it: Linux's boot_id, macOS's
 * kern.bootsessionuuid, Windows' boot counter (PrefetchParameters\BootId, as the kubelet's
 * winstats reads it). Elsewhere, or when those fail: a UUID made of the machine ID and the boot
 * time rounded to the minute (an agent restarted across a minute boundary of the clock's drift
 * could see it change).
 */
async function bootID(machineID: string): Promise<string> {
  try {
    if (process.platform === 'linux') {
      return (await fsp.readFile('/proc/sys/kernel/random/boot_id', 'utf8')).trim();
    }
    if (process.platform === 'darwin') {
      const id = (await run('sysctl', ['-n', 'kern.bootsessionuuid'])).trim();
      if (id) return id;
    }
    if (process.platform === 'win32') {
      const id = parseRegDword(
        await run('reg', [
          'query',
          'HKLM\\SYSTEM\\CurrentControlSet\\Control\\Session Manager\\Memory Management\\PrefetchParameters',
          '/v',
          'BootId',
        ]),
      );
      if (id !== undefined) return String(id);
    }
  } catch {
    // fall back below
  }
  const bootMinute = Math.round((Date.now() - os.uptime() * 1000) / 60_000);
  const hex = createHash('sha256').update(`${machineID}\0${bootMinute}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/** The value of a `reg query ... /v Name` answer: `    BootId    REG_DWORD    0x1a3`. */
export function parseRegDword(text: string): number | undefined {
  const m = /REG_DWORD\s+0x([0-9a-fA-F]+)/.exec(text);
  return m ? parseInt(m[1], 16) : undefined;
}

function run(file: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { timeout: 5_000, windowsHide: true }, (err, stdout) =>
      err ? reject(err) : resolve(stdout),
    );
  });
}

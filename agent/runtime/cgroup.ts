/**
 * CPU and memory limits for container processes through cgroup v2: one cgroup per container,
 * `<root>/kubelab/<podUid>/<name>`, with cpu.max and memory.max. The wrapper joins it before it
 * starts the container (see wrapper.ts), so every process of the container is inside.
 *
 * Limits need a writable cgroup v2 hierarchy with the cpu and memory controllers: the agent
 * running as root on a cgroup v2 host (root = /sys/fs/cgroup), or under a systemd unit with
 * `Delegate=yes` — then point `root` at a subtree of the unit's cgroup that holds no process
 * (cgroup v2 forbids enabling controllers for children of a cgroup that has processes itself).
 * Anywhere else (cgroup v1 or hybrid hosts, a container without a delegated cgroup, macOS) the
 * limits are not enforced, and that is logged once, with the reason.
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import type { Logger } from '../logger.js';
import { isNotFound } from './layout.js';

/** statfs f_type of a cgroup v2 mount. */
const CGROUP2_SUPER_MAGIC = 0x63677270;
/** cpu.max period: the kernel's default, 100 ms. */
const CPU_PERIOD_US = 100_000;
/** The kernel refuses a cpu.max quota under 1 ms. */
const MIN_CPU_QUOTA_US = 1_000;
const CONTROLLERS = ['cpu', 'memory'] as const;

export interface CgroupLimits {
  milliCPU?: number;
  memoryBytes?: number;
}

/** A container's cgroup, ready for its wrapper to join. */
export interface ContainerCgroup {
  path: string;
  /** `<path>/cgroup.procs`: the wrapper writes its pid here. */
  procsFile: string;
  /** memory.events oom_kill when the cgroup was prepared: a later, higher count means OOMKilled. */
  oomKillsBefore: number;
}

export interface CgroupsOptions {
  logger: Logger;
  /** A cgroup v2 directory the agent may manage (default /sys/fs/cgroup). */
  root?: string;
}

export class Cgroups {
  private readonly logger: Logger;
  private readonly root: string;
  private readonly base: string;
  private availability?: Promise<string | undefined>;
  private warned = false;

  constructor(opts: CgroupsOptions) {
    this.logger = opts.logger;
    this.root = opts.root ?? '/sys/fs/cgroup';
    this.base = path.join(this.root, 'kubelab');
  }

  /**
   * Why limits cannot be enforced here, or undefined when they can. Checked once (it creates the
   * `kubelab` cgroup and enables the controllers for its children).
   */
  unavailableReason(): Promise<string | undefined> {
    this.availability ??= this.checkAvailability();
    return this.availability;
  }

  /**
   * Creates (or reuses) the container's cgroup with `limits`. Undefined when there are no limits
   * to apply, or when they cannot be enforced here (logged once, as a warning).
   */
  async prepare(
    podUid: string,
    name: string,
    limits: CgroupLimits | undefined,
  ): Promise<ContainerCgroup | undefined> {
    if (limits?.milliCPU === undefined && limits?.memoryBytes === undefined) return undefined;
    const reason = await this.unavailableReason();
    if (reason !== undefined) {
      if (!this.warned) {
        this.warned = true;
        this.logger.warn({ reason }, 'container cpu/memory limits are not enforced on this node');
      }
      return undefined;
    }
    const podPath = path.join(this.base, podUid);
    const containerPath = path.join(podPath, name);
    try {
      await fsp.mkdir(podPath, { recursive: true });
      await enableControllers(podPath);
      await fsp.mkdir(containerPath, { recursive: true });
      await fsp.writeFile(path.join(containerPath, 'cpu.max'), cpuMax(limits.milliCPU));
      await fsp.writeFile(path.join(containerPath, 'memory.max'), memoryMax(limits.memoryBytes));
      if (limits.memoryBytes !== undefined) {
        // Without this the kernel swaps instead of enforcing the limit (where swap is on).
        await fsp.writeFile(path.join(containerPath, 'memory.swap.max'), '0').catch(() => undefined);
      }
    } catch (err) {
      this.logger.warn(
        { err, cgroup: containerPath },
        'could not set up the container cgroup; its cpu/memory limits are not enforced',
      );
      return undefined;
    }
    return {
      path: containerPath,
      procsFile: path.join(containerPath, 'cgroup.procs'),
      oomKillsBefore: await oomKills(containerPath),
    };
  }

  /** Removes a container's cgroup once its processes are gone (best effort: busy stays). */
  async release(cgroupPath: string): Promise<void> {
    await fsp.rmdir(cgroupPath).catch(() => undefined);
  }

  /** Removes a pod's cgroups (best effort). */
  async removePod(podUid: string): Promise<void> {
    if ((await this.unavailableReason()) !== undefined) return;
    const podPath = path.join(this.base, podUid);
    let children: string[] = [];
    try {
      children = (await fsp.readdir(podPath, { withFileTypes: true }))
        .filter((e) => e.isDirectory())
        .map((e) => e.name);
    } catch (err) {
      if (isNotFound(err)) return;
    }
    for (const child of children) await this.release(path.join(podPath, child));
    await this.release(podPath);
  }

  private async checkAvailability(): Promise<string | undefined> {
    try {
      const fs = await fsp.statfs(this.root);
      if (fs.type !== CGROUP2_SUPER_MAGIC) {
        return `${this.root} is not a cgroup v2 mount (a cgroup v1 or hybrid host, or no cgroups here)`;
      }
      const available = (await fsp.readFile(path.join(this.root, 'cgroup.controllers'), 'utf8')).split(/\s+/);
      const missing = CONTROLLERS.filter((c) => !available.includes(c));
      if (missing.length > 0) {
        return `the ${missing.join(' and ')} controller${missing.length > 1 ? 's are' : ' is'} not available in ${this.root} (cgroup.controllers: ${available.join(' ').trim() || 'none'}): delegate them to the agent`;
      }
      await enableControllers(this.root);
      await fsp.mkdir(this.base, { recursive: true });
      await enableControllers(this.base);
      return undefined;
    } catch (err) {
      return `cannot manage cgroups under ${this.root} (${(err as Error).message}): run the agent as root on a cgroup v2 host, or under systemd with Delegate=yes`;
    }
  }
}

/** cpu.max for a CPU limit: quota per 100 ms period ("50000 100000" for 500m), or "max". */
export function cpuMax(milliCPU: number | undefined): string {
  if (milliCPU === undefined) return `max ${CPU_PERIOD_US}`;
  const quota = Math.max(MIN_CPU_QUOTA_US, Math.round((milliCPU * CPU_PERIOD_US) / 1000));
  return `${quota} ${CPU_PERIOD_US}`;
}

/** memory.max for a memory limit in bytes, or "max". */
export function memoryMax(memoryBytes: number | undefined): string {
  return memoryBytes === undefined ? 'max' : String(Math.max(0, Math.floor(memoryBytes)));
}

/** How many processes the kernel's OOM killer has killed in this cgroup (memory.events). */
export async function oomKills(cgroupPath: string): Promise<number> {
  try {
    const events = await fsp.readFile(path.join(cgroupPath, 'memory.events'), 'utf8');
    const match = /^oom_kill (\d+)$/m.exec(events);
    return match ? Number(match[1]) : 0;
  } catch {
    return 0;
  }
}

/** Lets the children of `dir` use the cpu and memory controllers (no-op when already so). */
async function enableControllers(dir: string): Promise<void> {
  const file = path.join(dir, 'cgroup.subtree_control');
  const enabled = (await fsp.readFile(file, 'utf8')).split(/\s+/);
  const missing = CONTROLLERS.filter((c) => !enabled.includes(c));
  if (missing.length > 0) await fsp.writeFile(file, missing.map((c) => `+${c}`).join(' '));
}

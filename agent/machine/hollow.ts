/**
 * The machine of a simulated ("hollow") node: readings made up from the node's name, the same
 * sequence every run, and under a test's control through set() and setInfo(). No I/O at all.
 *
 * Defaults: 4 cores, 8 GiB of memory, a 100 GiB nodefs; about half the memory available, 60–80 %
 * of the disk free, 5–25 % of the CPU busy, a few hundred processes out of 32768, each reading
 * wobbling a little from sample to sample; network counters only grow.
 */
import { createHash } from 'node:crypto';
import type { MachineInfo, MachineReader, MachineSample } from './types.js';

const GiB = 1024 ** 3;

export interface HollowMachineReaderOptions {
  /** The node's name: hostname, and the seed of its IDs. */
  name: string;
  /**
   * The node's number among the simulated nodes: its InternalIP is 10.0.0.1 + index (10.0.0.1,
   * 10.0.0.2, ... 10.0.1.0, ...). Default: derived from the name (pass it to be sure that no
   * two nodes share an address).
   */
  index?: number;
  /** Seed of the readings (default: the name). IDs always follow the name. */
  seed?: string;
  /** Clock for `MachineSample.at` (default `Date.now`). */
  now?: () => number;
}

/** The overridable readings: every field of a sample. */
export type HollowSampleOverrides = Partial<MachineSample>;

export class HollowMachineReader implements MachineReader {
  private readonly name: string;
  private readonly seed: string;
  private readonly now: () => number;
  private readonly defaults: MachineInfo;
  private infoOverrides: Partial<MachineInfo> = {};
  private overrides: HollowSampleOverrides = {};
  private n = 0;
  private rx: number;
  private tx: number;

  constructor(opts: HollowMachineReaderOptions) {
    this.name = opts.name;
    this.seed = opts.seed ?? opts.name;
    this.now = opts.now ?? Date.now;
    const index = opts.index ?? parseInt(hash('index', this.name).slice(0, 6), 16);
    this.defaults = {
      hostname: this.name,
      internalIPs: [ipFromIndex(index)],
      machineID: hash('machine-id', this.name).slice(0, 32),
      systemUUID: uuidFrom(hash('system-uuid', this.name)),
      bootID: uuidFrom(hash('boot-id', this.name)),
      kernelVersion: '6.1.0-hollow-amd64',
      osImage: 'Hollow Linux (kubelab simulated node)',
      operatingSystem: 'linux',
      architecture: 'amd64',
      cpuCores: 4,
      memoryTotalBytes: 8 * GiB,
      nodefsCapacityBytes: 100 * GiB,
    };
    this.rx = Math.round(1e6 + this.rand('rx0') * 1e9);
    this.tx = Math.round(1e6 + this.rand('tx0') * 1e8);
  }

  async info(): Promise<MachineInfo> {
    return this.currentInfo();
  }

  async sample(): Promise<MachineSample> {
    const n = this.n++;
    const info = this.currentInfo();
    const o = this.overrides;
    // A node-specific level plus a small per-sample wobble, both from the seed.
    const level = (key: string, low: number, high: number, wobble: number) =>
      low + (high - low) * this.rand(key) + wobble * (2 * this.rand(key, n) - 1);

    const memoryTotalBytes = o.memoryTotalBytes ?? info.memoryTotalBytes;
    const nodefsCapacityBytes = o.nodefsCapacityBytes ?? info.nodefsCapacityBytes;
    const nodefsInodes = o.nodefsInodes ?? Math.floor(nodefsCapacityBytes / 16384);
    const cpuUsageCores = round(info.cpuCores * level('cpu', 0.05, 0.25, 0.03), 3);
    const load1 = round(cpuUsageCores * level('load1', 0.9, 1.1, 0.1), 2);
    this.rx += Math.round(20_000 + 200_000 * this.rand('rx', n));
    this.tx += Math.round(5_000 + 50_000 * this.rand('tx', n));

    const synthetic: MachineSample = {
      at: this.now(),
      memoryAvailableBytes: pages(memoryTotalBytes * level('mem', 0.4, 0.6, 0.02)),
      memoryTotalBytes,
      nodefsAvailableBytes: pages(nodefsCapacityBytes * level('disk', 0.6, 0.8, 0.005)),
      nodefsCapacityBytes,
      nodefsInodesFree: Math.floor(nodefsInodes * level('inodes', 0.85, 0.95, 0.005)),
      nodefsInodes,
      processes: Math.round(level('procs', 150, 350, 10)),
      processLimit: 32768,
      cpuUsageCores,
      load1,
      load5: round(load1 * level('load5', 0.95, 1.05, 0.02), 2),
      load15: round(load1 * level('load15', 0.95, 1.05, 0.01), 2),
      networkReceiveBytes: this.rx,
      networkTransmitBytes: this.tx,
    };
    return { ...synthetic, ...o };
  }

  /**
   * Override readings from the next sample on, until overridden again; `undefined` for a field
   * drops its override (back to the synthetic reading). Total fields set here (memory, nodefs
   * capacity, inodes) also scale the synthetic readings derived from them.
   */
  set(partial: HollowSampleOverrides): void {
    this.overrides = merge(this.overrides, partial);
  }

  /** Override facts; `undefined` for a field restores its default. Samples follow the totals. */
  setInfo(partial: Partial<MachineInfo>): void {
    this.infoOverrides = merge(this.infoOverrides, partial);
  }

  /** Drop every override of readings and facts. */
  reset(): void {
    this.overrides = {};
    this.infoOverrides = {};
  }

  private currentInfo(): MachineInfo {
    const info = { ...this.defaults, ...this.infoOverrides };
    return { ...info, internalIPs: [...info.internalIPs] };
  }

  /**
   * A deterministic number in [0, 1) for this seed, key and (optionally) sample number. A fleet
   * draws ~16 per node per sample: a SHA-256 each was a few percent of a 5,000-node fleet's CPU.
   */
  private rand(key: string, n = -1): number {
    return unitHash(`${key}\0${this.seed}\0${n}`);
  }
}

function merge<T extends object>(current: Partial<T>, partial: Partial<T>): Partial<T> {
  const out: Partial<T> = { ...current };
  for (const key of Object.keys(partial) as (keyof T)[]) {
    if (partial[key] === undefined) delete out[key];
    else out[key] = partial[key];
  }
  return out;
}

/** FNV-1a over the text's UTF-16 units, then an avalanche of the bits: a number in [0, 1). */
export function unitHash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x7feb352d);
  h ^= h >>> 15;
  h = Math.imul(h, 0x846ca68b);
  h ^= h >>> 16;
  return (h >>> 0) / 2 ** 32;
}

function hash(kind: string, value: string): string {
  return createHash('sha256').update(`${kind}\0${value}`).digest('hex');
}

/** A version-4-shaped UUID from a hex digest. */
function uuidFrom(hex: string): string {
  const variant = ((parseInt(hex[16], 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** 10.0.0.1 + index, within 10.0.0.0/8. */
export function ipFromIndex(index: number): string {
  const m = 0xfffffe;
  const n = (((Math.floor(index) % m) + m) % m) + 1;
  return `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
}

function pages(bytes: number): number {
  return Math.max(0, Math.floor(bytes / 4096) * 4096);
}

function round(x: number, digits: number): number {
  const f = 10 ** digits;
  return Math.max(0, Math.round(x * f) / f);
}

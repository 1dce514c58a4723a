/**
 * CPU over a phase of bench:gui: the run's node processes (server, agents) sampled from /proc
 * every second, Chromium's processes by type from the browser itself (CDP), the whole machine,
 * and what is left for everyone else — on a shared 2-core machine, the first thing to read
 * beside a slow frame — and the server's longest event-loop stall meanwhile.
 */
import { chromiumCpuByType, coresBetween, type GuiBrowser } from './gui-browser.js';
import type { ServerHealth } from './gui-health.js';
import { ProcSampler } from './proc.js';
import { nowMs } from './stats.js';

/** Cores used during a phase: ours (by process), Chromium's (by process type), the machine's and everyone else's. */
export interface PhaseLoad {
  seconds: number;
  cores: Record<string, number>;
  chromium: Record<string, number>;
  machine: number;
  others: number;
  /** The server's longest event-loop stall during the phase, ms. */
  serverLagMs: number;
}

/** Processes of the run sampled every second; Chromium's CPU read from the browser. */
export class LoadMeter {
  readonly sampler: ProcSampler;
  constructor(
    pids: Map<string, number>,
    private readonly health: ServerHealth,
  ) {
    this.sampler = new ProcSampler(pids, 1000);
  }

  /** Runs `fn` and gives the cores every process used meanwhile. */
  async during<T>(g: GuiBrowser, fn: () => Promise<T>): Promise<{ value: T; load: PhaseLoad }> {
    this.sampler.sample();
    const from = this.sampler.elapsed();
    const chromium0 = await chromiumCpuByType(g);
    await this.health.lagMs(); // resets the server's reading: the next one covers the phase
    const t0 = nowMs();
    const value = await fn();
    const seconds = (nowMs() - t0) / 1000;
    const serverLagMs = await this.health.lagMs();
    const chromium1 = await chromiumCpuByType(g);
    this.sampler.sample();
    const to = this.sampler.elapsed();
    const cores: Record<string, number> = {};
    for (const name of this.sampler.samples.keys())
      cores[name] = (this.sampler.summary(name, from, to)?.cpuPct ?? NaN) / 100;
    const chromium = coresBetween(chromium0, chromium1, seconds);
    const machine = this.sampler.machineLoad(from, to);
    const chromiumTotal = Object.values(chromium).reduce((a, b) => a + b, 0);
    return {
      value,
      load: {
        seconds,
        cores,
        chromium,
        machine: machine?.busyCores ?? NaN,
        // The sampler counts our node processes; Chromium is ours too.
        others: machine ? Math.max(0, machine.othersCores - chromiumTotal) : NaN,
        serverLagMs,
      },
    };
  }

  stop(): void {
    this.sampler.stop();
  }
}

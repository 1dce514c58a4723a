/**
 * How the server and the agents are coping, for bench:gui's progress lines and report: the
 * server's event-loop lag from its /metrics (prom-client resets it at each reading, so a
 * reading covers the time since the one before) and the agents' log lines at warn or above.
 * At thousands of hollow nodes a stalled server shows here first: agents' leases and status
 * writes time out, and nodes fall out of Ready.
 */
import type { Proc } from './childproc.js';
import { scrape } from './scrape.js';
import { fmt } from './stats.js';

function total(problems: Map<string, number>): number {
  let n = 0;
  for (const v of problems.values()) n += v;
  return n;
}

export class ServerHealth {
  /** The worst event-loop lag read so far, ms. */
  worstLagMs = 0;
  private readonly warnSeen = new Map<string, number>();

  constructor(
    private readonly metricsPort: number,
    private readonly procs: () => Proc[],
  ) {}

  /** The server's longest event-loop stall since the last reading, ms (NaN if unreadable). */
  async lagMs(): Promise<number> {
    const s = await scrape(this.metricsPort);
    const lag = (s.get('nodejs_eventloop_lag_max_seconds') ?? NaN) * 1000;
    if (lag > this.worstLagMs) this.worstLagMs = lag;
    return lag;
  }

  /** A progress line's tail: the server's lag and the agents' new warn lines since the last one. */
  async line(): Promise<string> {
    const lag = await this.lagMs();
    const warns = this.procs().map((p) => {
      const n = total(p.problems);
      const added = n - (this.warnSeen.get(p.name) ?? 0);
      this.warnSeen.set(p.name, n);
      return `${p.name} +${fmt(added, 0)}`;
    });
    return `server event-loop lag ≤ ${fmt(lag, 0)} ms since the last line${warns.length ? `; agents' warn lines ${warns.join(', ')}` : ''}`;
  }
}

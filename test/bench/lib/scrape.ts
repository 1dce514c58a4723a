/**
 * A server's Prometheus /metrics (its --metrics-listen port) as a map of series (name with
 * labels, as printed) to values, and the change of a series between two readings.
 */
import { log } from './run.js';

export type Scrape = Map<string, number>;

export async function scrape(port: number): Promise<Scrape> {
  const out: Scrape = new Map();
  try {
    const res = await fetch(`http://127.0.0.1:${port}/metrics`);
    for (const line of (await res.text()).split('\n')) {
      if (!line || line.startsWith('#')) continue;
      const cut = line.lastIndexOf(' ');
      out.set(line.slice(0, cut), Number(line.slice(cut + 1)));
    }
  } catch (err) {
    log(`could not read /metrics on port ${port}: ${(err as Error).message}`);
  }
  return out;
}

/** after − before for one series (a missing series counts 0). */
export function scrapeDelta(before: Scrape, after: Scrape, series: string): number {
  return (after.get(series) ?? 0) - (before.get(series) ?? 0);
}

/**
 * bench:scale's probes of a measured window: an API client doing get / list / create every
 * 250 ms, and the GUI bridge asked hello every 100 ms over the WebSocket `kubelab server
 * --ui-listen` serves. They run in a process of their own (probe-child.ts), as the desktop
 * window and a user's kubectl do: the benchmark process keeps a 5,000-node informer and
 * drives the fleets, and its own pauses must not count as the server's.
 */
import { WebSocket } from 'ws';
import type { Client } from '../../../client/client.js';
import { nowMs, percentileSorted, sleep, sortedCopy } from './stats.js';

export interface Latencies {
  count: number;
  errors: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

export type ApiLatencies = Record<'get' | 'list' | 'create', Latencies>;

export function latencies(samples: number[], errors: number): Latencies {
  const s = sortedCopy(samples);
  return {
    count: samples.length,
    errors,
    p50Ms: percentileSorted(s, 50),
    p99Ms: percentileSorted(s, 99),
    maxMs: s.length ? s[s.length - 1] : NaN,
  };
}

/** get / list / create through a client of its own, one after another, every 250 ms. */
export function apiProbe(
  client: Client,
  namespace: string,
  nodeNames: (i: number) => string,
): { stop(): Promise<ApiLatencies> } {
  const samples = { get: [] as number[], list: [] as number[], create: [] as number[] };
  const errors = { get: 0, list: 0, create: 0 };
  let stopped = false;
  let i = 0;
  const time = async (what: keyof typeof samples, call: () => Promise<unknown>) => {
    const t0 = nowMs();
    try {
      await call();
      samples[what].push(nowMs() - t0);
    } catch {
      errors[what]++;
    }
  };
  const loop = (async () => {
    while (!stopped) {
      const t0 = nowMs();
      i++;
      await time('get', () => client.get('Node', nodeNames(i)));
      await time('list', () => client.list('Pod', { namespace, limit: 500 }));
      await time('create', () =>
        client.create({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: `probe-${i}`, namespace },
          data: { i: String(i) },
        }),
      );
      await sleep(Math.max(0, 250 - (nowMs() - t0)));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      return {
        get: latencies(samples.get, errors.get),
        list: latencies(samples.list, errors.list),
        create: latencies(samples.create, errors.create),
      };
    },
  };
}

/** The GUI bridge's hello, every 100 ms; a hello unanswered 2 s after the last counts as an error. */
export async function bridgeProbe(port: number, token: string): Promise<{ stop(): Promise<Latencies> }> {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/bridge`, {
    headers: { authorization: `Bearer ${token}` },
  });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
    ws.once('close', (code, reason) => reject(new Error(`the bridge closed: ${code} ${reason.toString()}`)));
  });
  const samples: number[] = [];
  let errors = 0;
  const pending = new Map<number, number>();
  ws.on('message', (data) => {
    const m = JSON.parse(data.toString()) as { id?: number; error?: unknown };
    const sent = m.id !== undefined ? pending.get(m.id) : undefined;
    if (sent === undefined) return;
    pending.delete(m.id!);
    if (m.error) errors++;
    else samples.push(nowMs() - sent);
  });
  let id = 0;
  const timer = setInterval(() => {
    pending.set(++id, nowMs());
    ws.send(JSON.stringify({ id, op: 'hello' }));
  }, 100);
  return {
    async stop() {
      clearInterval(timer);
      await sleep(2000);
      errors += pending.size;
      ws.close();
      return latencies(samples, errors);
    },
  };
}

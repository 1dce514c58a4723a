/**
 * Reading a `--cpu-prof` folder of a child process: the thread with the most busy samples (the
 * main thread; tsx's loader writes a profile of its own worker too), restricted to a window of
 * CLOCK_MONOTONIC (the clock of V8's profiles and of process.hrtime() in every process of the
 * machine), idle samples left out: the functions with the most self time, and kubelab's own
 * functions (main/, client/, agent/, proto/) by total time (their own and their callees').
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { topSelfTime } from './run.js';

type CpuProfile = Parameters<typeof topSelfTime>[0] & { timeDeltas?: number[] };

export interface CpuProfileSummary {
  /** Self time per function, in percent of the busy samples in the window. */
  self: Array<{ fn: string; pct: number }>;
  /** kubelab's own functions by total time, in percent of the same samples. */
  inclusive: Array<{ fn: string; pct: number }>;
  path: string;
  /** Whether the window had samples (if not, the whole profile is summarized). */
  windowed: boolean;
  busySamples: number;
  seconds: number;
  /** Mean sampling interval, ms (V8's default is 1 ms; slower when the thread is starved). */
  intervalMs: number;
}

/** Marks CLOCK_MONOTONIC now, in µs: the time base of V8's profiles. */
export function monotonicUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

export function summarizeCpuProfile(
  dir: string,
  repoRoot: string,
  fromUs = -Infinity,
  toUs = Infinity,
  top = 20,
): CpuProfileSummary {
  const idleOf = (p: CpuProfile) =>
    new Set(p.nodes.filter((n) => n.callFrame.functionName === '(idle)').map((n) => n.id));
  let best: { path: string; profile: CpuProfile; busy: number } | undefined;
  for (const f of readdirSync(dir).filter((x) => x.endsWith('.cpuprofile'))) {
    const profile = JSON.parse(readFileSync(join(dir, f), 'utf8')) as CpuProfile;
    const idle = idleOf(profile);
    const busy = (profile.samples ?? []).filter((id) => !idle.has(id)).length;
    if (!best || busy > best.busy) best = { path: join(dir, f), profile, busy };
  }
  if (!best) throw new Error(`no .cpuprofile in ${dir}`);
  const { profile } = best;
  const idle = idleOf(profile);
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  const hits = (from: number, to: number) => {
    const out = new Map<number, number>();
    let t = profile.startTime;
    let n = 0;
    let all = 0;
    let first = NaN;
    let last = NaN;
    for (let i = 0; i < samples.length; i++) {
      t += deltas[i] ?? 0;
      if (t < from || t > to) continue;
      all++;
      if (Number.isNaN(first)) first = t;
      last = t;
      if (idle.has(samples[i])) continue;
      out.set(samples[i], (out.get(samples[i]) ?? 0) + 1);
      n++;
    }
    return { out, n, all, span: last - first };
  };
  let window = hits(fromUs, toUs);
  const windowed = window.n > 0;
  if (!windowed) window = hits(-Infinity, Infinity);
  const seconds = windowed ? (toUs - fromUs) / 1e6 : (profile.endTime - profile.startTime) / 1e6;
  const nodes = profile.nodes.map((n) => ({ ...n, hitCount: window.out.get(n.id) ?? 0 }));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const own = (id: number) => {
    const f = byId.get(id)!.callFrame;
    const at = f.url.indexOf(`${repoRoot}/`);
    const path = at < 0 ? '' : f.url.slice(at + repoRoot.length + 1);
    return /^(main|client|agent|proto)\//.test(path)
      ? `${f.functionName || '(anonymous)'} ${path}`
      : undefined;
  };
  // A sample counts once for every distinct kubelab function on its stack.
  const total = new Map<string, number>();
  for (const [id, n] of window.out) {
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const fn = own(at);
      if (fn) seen.add(fn);
    }
    for (const fn of seen) total.set(fn, (total.get(fn) ?? 0) + n);
  }
  return {
    self: topSelfTime({ ...profile, nodes }, top).map((x) => ({ fn: x.fn, pct: x.selfPct })),
    inclusive: [...total.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([fn, n]) => ({ fn, pct: (100 * n) / window.n })),
    path: best.path,
    windowed,
    busySamples: window.n,
    seconds,
    intervalMs: window.all > 1 ? window.span / 1000 / (window.all - 1) : NaN,
  };
}

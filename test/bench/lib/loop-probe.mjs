/**
 * Preloaded into a `kubelab server` child (`node --import <this file>`) by bench:scale: reports
 * the process's event-loop delay (monitorEventLoopDelay), its GC pauses (PerformanceObserver
 * 'gc') and its memory, as JSON written to $KUBELAB_BENCH_LOOP_PROBE every second. Touching
 * `<that path>.mark` starts a new window: the histogram and the GC figures start again. With
 * $KUBELAB_BENCH_CPU_PROFILE set to a folder, each window is also CPU-profiled (inspector, 10 ms
 * samples) into window-<mark>.cpuprofile there, written when the next window starts.
 * Plain JavaScript so that it loads before tsx does.
 */
import { mkdirSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { monitorEventLoopDelay, PerformanceObserver, constants } from 'node:perf_hooks';
import { Session } from 'node:inspector';
import { join } from 'node:path';

const path = process.env.KUBELAB_BENCH_LOOP_PROBE;
if (path) {
  const KINDS = {
    [constants.NODE_PERFORMANCE_GC_MINOR]: 'scavenge',
    [constants.NODE_PERFORMANCE_GC_MAJOR]: 'mark-compact',
    [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental marking',
    [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weak callbacks',
  };
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const fresh = () => ({ since: Date.now(), count: 0, totalMs: 0, maxMs: 0, maxKind: '', byKind: {} });
  let gc = fresh();
  let peak = { rss: 0, heapUsed: 0, heapTotal: 0 };
  let markSeen = 0;
  const profileDir = process.env.KUBELAB_BENCH_CPU_PROFILE;
  let profiler;
  const profileWindow = () => {
    if (!profileDir) return;
    if (!profiler) {
      // A folder that does not exist yet would lose every profile silently at the first write.
      mkdirSync(profileDir, { recursive: true });
      profiler = new Session();
      profiler.connect();
      profiler.post('Profiler.enable');
      profiler.post('Profiler.setSamplingInterval', { interval: 10_000 });
    }
    const started = () => profiler.post('Profiler.start');
    if (markSeen === 0) return started();
    const previous = markSeen;
    profiler.post('Profiler.stop', (err, result) => {
      if (!err)
        writeFileSync(join(profileDir, `window-${previous}.cpuprofile`), JSON.stringify(result.profile));
      started();
    });
  };
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const kind = KINDS[e.detail?.kind] ?? `kind ${e.detail?.kind}`;
      const k = (gc.byKind[kind] ??= { count: 0, totalMs: 0, maxMs: 0 });
      k.count++;
      k.totalMs += e.duration;
      if (e.duration > k.maxMs) k.maxMs = e.duration;
      gc.count++;
      gc.totalMs += e.duration;
      if (e.duration > gc.maxMs) {
        gc.maxMs = e.duration;
        gc.maxKind = kind;
      }
    }
  }).observe({ entryTypes: ['gc'] });
  const tick = () => {
    let mark = 0;
    try {
      mark = statSync(`${path}.mark`).mtimeMs;
    } catch {
      // no window marked yet
    }
    if (mark !== markSeen) {
      profileWindow();
      markSeen = mark;
      delay.reset();
      gc = fresh();
      peak = { rss: 0, heapUsed: 0, heapTotal: 0 };
    }
    const m = process.memoryUsage();
    for (const key of ['rss', 'heapUsed', 'heapTotal']) if (m[key] > peak[key]) peak[key] = m[key];
    const snapshot = {
      at: Date.now(),
      mark,
      windowMs: Date.now() - gc.since,
      loop: {
        count: delay.count,
        p50Ms: delay.percentile(50) / 1e6,
        p99Ms: delay.percentile(99) / 1e6,
        maxMs: delay.max / 1e6,
        meanMs: delay.mean / 1e6,
      },
      gc,
      memory: { rss: m.rss, heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external, peak },
    };
    writeFileSync(`${path}.tmp`, JSON.stringify(snapshot));
    renameSync(`${path}.tmp`, path);
  };
  setInterval(tick, 1000).unref();
}

/**
 * bench:gui's section of BENCHMARKS.md: what was measured and how, the machine and whether
 * other work shared it, the figures of each measurement and the goals of tracker issue 9
 * (scroll ≥ 50 fps, event → screen ≤ 100 ms, heap flat after 10 minutes idle) as PASS/MISS.
 */
import type { FirstRender, ScrollRun } from './gui-page.js';
import type { HeapReading, PageProfile } from './gui-browser.js';
import { heapSlopeMiBPerMin, type IdlePeriod } from './gui-idle.js';
import type { PhaseLoad } from './gui-load.js';
import { stageTimes, type ChangeSample } from './gui-latency.js';
import type { RunningWait } from './gui-pods.js';
import { changedNote, type MachineInfo } from './machine.js';
import { MiB } from './proc.js';
import { table } from './report.js';
import { fmt, percentileSorted, sortedCopy } from './stats.js';

export const GOAL_FPS = 50;
export const GOAL_EVENT_TO_SCREEN_MS = 100;
/** A frame longer than this is a visible stutter. */
export const LONG_FRAME_MS = 50;
/**
 * "Flat": no sustained growth — the slope over the second half of the idle period (the page's
 * warm-up, compiled code and caches, settles within the first minutes), projected over the
 * whole period, stays within this share of the first reading, or this many MiB if more.
 */
export const FLAT_SHARE = 0.01;
export const FLAT_MIN_MIB = 1;

export interface GuiSettings {
  nodes: number;
  pods: number;
  agentProcesses: number;
  podsPerNode: number;
  rounds: number;
  scrollMs: number;
  scrollPxPerSec: number;
  samples: number;
  idleMs: number;
  heapEveryMs: number;
  idleView: 'nodes' | 'pods';
  churnPerSec: number;
  joinConcurrency: number;
  createConcurrency: number;
  /** The command line as typed after `npm run bench:gui --`. */
  argv: string[];
}

export interface ScrollResult extends ScrollRun {
  rows: number;
  load?: PhaseLoad;
  /** With --profile: the page's CPU profile over the scroll. */
  profile?: PageProfile;
}

export interface GuiResults {
  agentProcs: Array<{ name: string; count: number }>;
  joinSeconds?: number;
  readySeconds?: number;
  create?: { seconds: number; perSec: number };
  running?: RunningWait;
  browserVersion?: string;
  /** The server's longest event-loop stall while the fleet started and the pods were created, ms. */
  setupLagMs?: number;
  /** goto(the link) → "Live" and every node counted on the overview, ms. */
  signInMs?: number;
  firstRender: { nodes: FirstRender[]; pods: FirstRender[] };
  scroll: { nodes?: ScrollResult; pods?: ScrollResult };
  latency: { pods?: ChangeSample[]; nodes?: { node: string; samples: ChangeSample[] }; load?: PhaseLoad };
  idle?: IdlePeriod & { load?: PhaseLoad };
  churn?: { patches: number; failures: number; firstError?: string };
  /** Other benchmarks seen running while timed figures were taken (or at the start or end), by command line. */
  othersSeen: string[];
  /**
   * Those seen only in the idle phase, after every timed figure: it measures the page's heap
   * after GC, which others' load does not move, so the section is still written, with a note.
   */
  othersInIdleOnly: string[];
  loadAvg: { start: number; end: number };
  /** Log lines at warn or above of the server and the agents, by message. */
  problems: Array<{ name: string; problems: Map<string, number> }>;
  error?: string;
}

const ms = (v: number) => (Number.isFinite(v) ? `${fmt(v, v >= 100 ? 0 : 1)} ms` : 'n/a');
const s1 = (v: number | undefined) => (v !== undefined && Number.isFinite(v) ? `${fmt(v, 1)} s` : 'n/a');

function goalRow(what: string, value: string, goal: string, pass: boolean | undefined): string[] {
  return [what, value, goal, pass === undefined ? 'n/a' : pass ? 'PASS' : '**MISS**'];
}

interface Dist {
  n: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

function dist(values: number[]): Dist {
  const s = sortedCopy(values);
  return {
    n: s.length,
    p50: percentileSorted(s, 50),
    p90: percentileSorted(s, 90),
    p99: percentileSorted(s, 99),
    max: s.length ? s[s.length - 1] : NaN,
  };
}

export interface ScrollFigures {
  frames: number;
  fps: number;
  p50: number;
  p95: number;
  worst: number;
  longFrames: number;
}

export function scrollFigures(r: ScrollRun): ScrollFigures {
  const d = sortedCopy(r.frameMs);
  const total = r.frameMs.reduce((a, b) => a + b, 0);
  return {
    frames: r.frameMs.length,
    fps: r.frameMs.length / (total / 1000),
    p50: percentileSorted(d, 50),
    p95: percentileSorted(d, 95),
    worst: d.length ? d[d.length - 1] : NaN,
    longFrames: r.frameMs.filter((x) => x > LONG_FRAME_MS).length,
  };
}

/** The heap's slopes over the idle period and whether it stayed flat (see FLAT_SHARE). */
export function heapVerdict(readings: HeapReading[]): {
  slope: number;
  secondHalfSlope: number;
  /** The second half's slope over the whole period, MiB. */
  sustainedGrowthMiB: number;
  boundMiB: number;
  flat: boolean | undefined;
} {
  const half = readings.slice(Math.floor((readings.length - 1) / 2));
  const secondHalfSlope = heapSlopeMiBPerMin(half);
  const minutes = readings.length ? readings[readings.length - 1].atMs / 60_000 : 0;
  const sustainedGrowthMiB = secondHalfSlope * minutes;
  const boundMiB = Math.max(FLAT_MIN_MIB, FLAT_SHARE * ((readings[0]?.usedBytes ?? 0) / MiB));
  return {
    slope: heapSlopeMiBPerMin(readings),
    secondHalfSlope,
    sustainedGrowthMiB,
    boundMiB,
    flat: Number.isFinite(secondHalfSlope) ? sustainedGrowthMiB <= boundMiB : undefined,
  };
}

function cores(v: number | undefined): string {
  return v !== undefined && Number.isFinite(v) ? fmt(v, 2) : 'n/a';
}

function loadText(l: PhaseLoad | undefined): string {
  if (!l) return 'n/a';
  const ours = Object.entries(l.cores)
    .map(([k, v]) => `${k} ${cores(v)}`)
    .join(', ');
  const chromium = Object.entries(l.chromium)
    .filter(([, v]) => v >= 0.005)
    .map(([k, v]) => `${k} ${cores(v)}`)
    .join(', ');
  return (
    `${ours}; Chromium: ${chromium || 'idle'}; machine ${cores(l.machine)} of its cores busy, others ${cores(l.others)}; ` +
    `the server's event loop stalled ≤ ${fmt(l.serverLagMs, 0)} ms`
  );
}

export function renderGuiSection(
  machine: MachineInfo,
  s: GuiSettings,
  r: GuiResults,
  started: Date,
  seconds: number,
): string {
  const out: string[] = [];
  out.push(`## ${started.toISOString().slice(0, 16).replace('T', ' ')} UTC — gui (\`npm run bench:gui\`)`);
  out.push('');
  const loads = [r.scroll.nodes?.load, r.scroll.pods?.load, r.latency.load, r.idle?.load].filter(
    (l): l is PhaseLoad => !!l,
  );
  const othersMax = loads.length ? Math.max(...loads.map((l) => l.others)) : NaN;
  out.push(
    `Machine: ${machine.cpu}, ${machine.cores} cores, ${fmt(machine.ramGiB, 1)} GiB RAM, ${machine.os}; Node ${machine.node}; ` +
      `Chromium ${r.browserVersion ?? 'n/a'} (headless). kubelab ${machine.commit}. Whole run: ${fmt(seconds / 60, 1)} min; ` +
      `load average ${fmt(r.loadAvg.start, 1)} at the start, ${fmt(r.loadAvg.end, 1)} at the end. MiB = 2^20 bytes; cores = CPU-seconds per second. ` +
      (othersMax >= 0.3
        ? `**The machine was shared: processes this benchmark did not start used up to ${fmt(othersMax, 2)} cores over a measured phase, ` +
          'so the page, the server and the agents competed with them for the cores.** '
        : '') +
      changedNote(machine),
  );
  out.push('');
  if (r.othersSeen.length) {
    out.push(
      `**Other benchmarks ran on this machine during the run, so every figure below is skewed by their load: ${r.othersSeen
        .map((o) => `\`${o}\``)
        .join(', ')}.**`,
    );
    out.push('');
  }
  if (r.othersInIdleOnly.length) {
    out.push(
      `Other benchmarks ran in the idle phase only, after every timed figure was taken: ${r.othersInIdleOnly
        .map((o) => `\`${o}\``)
        .join(', ')}. The idle phase measures the page's heap after GC, which their load does not move.`,
    );
    out.push('');
  }
  const small = s.nodes < 5000 || s.pods < 50_000 || s.idleMs < 10 * 60_000;
  out.push(
    '`kubelab server --ui` (SQLite, its in-process controllers, the GUI served on a loopback port) in a child process on ' +
      `127.0.0.1; ${fmt(s.nodes, 0)} hollow nodes in ${r.agentProcs.length} \`kubelab-agent --hollow N\` child processes ` +
      `(${r.agentProcs.map((p) => `${p.name} ${fmt(p.count, 0)}`).join(', ')}) at the agent's defaults (they renew their leases, ` +
      'post status and run the pods bound to them with the hollow runtime), joined ahead ' +
      `(${s.joinConcurrency} at a time${r.joinSeconds !== undefined ? `, ${s1(r.joinSeconds)}` : ''}); ` +
      `${fmt(s.pods, 0)} pods created through gRPC (${s.createConcurrency} writers) with \`spec.nodeName\` set, ${s.podsPerNode} per node — ` +
      'they land at once, without the scheduler, and the hollow agents start them. ' +
      "The browser: Debian's Chromium through playwright-core with the end-to-end tests' flags (headless, `--disable-gpu`: " +
      'software rendering), a 1280×800 page, signed in through the link the server prints. ' +
      `While the page is measured (from the scroll on), a trickle of ${fmt(s.churnPerSec, 0)} pod changes per second ` +
      "(an annotation patched on the pods in turn) joins the fleet's own status writes. " +
      `Command: \`npm run bench:gui${s.argv.length ? ` -- ${s.argv.join(' ')}` : ''}\`.` +
      (small ? ' **A reduced run: the issue asks for 5,000 nodes, 50,000 pods and 10 minutes idle.**' : ''),
  );
  out.push('');
  const running = r.running;
  out.push(
    `Set-up: every node Ready ${s1(r.readySeconds)} after the agents started; pods created in ${s1(r.create?.seconds)} ` +
      `(${fmt(r.create?.perSec ?? NaN, 0)}/s); ` +
      (running
        ? running.capped
          ? `**only ${fmt(running.running, 0)} of ${fmt(s.pods, 0)} were Running when the wait was capped (${s1(running.seconds)}): the GUI was measured while the rest started.** `
          : `every pod Running ${s1(running.seconds)} after the last create. `
        : '') +
      `Sign-in (the link opened → "Live" and ${fmt(s.nodes, 0)}/${fmt(s.nodes, 0)} nodes on the overview: every store listed): ` +
      `${r.signInMs !== undefined ? s1(r.signInMs / 1000) : 'n/a'}. ` +
      `The server's event loop stalled up to ${r.setupLagMs !== undefined ? ms(r.setupLagMs) : 'n/a'} during the set-up ` +
      '(its /metrics, read every 10 s).',
  );
  out.push('');

  // ---- first render
  out.push('### Time to first render');
  out.push('');
  out.push(
    "From the click on the view's navigation button (the click event's time in the page) to the first animation frame " +
      'with rows of the table in the DOM and its row count reading the full total (that frame paints them), measured in the ' +
      `page; ${s.rounds} rounds, the views taken in turn (Overview → Nodes → Pods → Nodes …), the stores already live. ` +
      'Longest frame: the longest gap between two frames meanwhile (how long the page was frozen).',
  );
  out.push('');
  const frRow = (view: string, total: number, list: FirstRender[]) => {
    if (!list.length) return [view, fmt(total, 0), 'n/a', 'n/a', 'n/a', 'n/a', 'n/a'];
    const ready = dist(list.map((x) => x.readyMs));
    return [
      view,
      fmt(total, 0),
      `**${ms(list[0].readyMs)}**`,
      `${ms(list[0].rowsMs)} / ${ms(list[0].countMs)}`,
      list.length > 1 ? `${ms(ready.p50)} / ${ms(ready.max)}` : '–',
      ms(Math.max(...list.map((x) => x.longestFrameMs))),
      list.map((x) => fmt(x.readyMs, 0)).join(', '),
    ];
  };
  out.push(
    table(
      [
        'view',
        'rows',
        'first render (1st round)',
        'rows / count (1st round)',
        'median / max of the rounds',
        'longest frame',
        'each round, ms',
      ],
      ['l', 'r', 'r', 'r', 'r', 'r', 'l'],
      [frRow('Nodes', s.nodes, r.firstRender.nodes), frRow('Pods', s.pods, r.firstRender.pods)],
    ),
  );
  out.push('');

  // ---- scroll
  out.push('### Scroll frame rate');
  out.push('');
  out.push(
    `Each table scrolled for ${fmt(s.scrollMs / 1000, 0)} s at ${fmt(s.scrollPxPerSec, 0)} px/s (a fast wheel) by setting the ` +
      "grid's scrollTop in every animation frame, in proportion to the time since the last one; fps = frames ÷ time, from the " +
      `frames' own timestamps. Long frames: over ${LONG_FRAME_MS} ms. "Rows followed": at the end, the rows in the DOM were ` +
      'the ones at the scroll position (the virtualiser kept up).',
  );
  out.push('');
  const scrollRow = (view: string, x: ScrollResult | undefined) => {
    if (!x) return [view, 'n/a', 'n/a', 'n/a', 'n/a', 'n/a', 'n/a', 'n/a', 'n/a'];
    const f = scrollFigures(x);
    return [
      view,
      fmt(x.rows, 0),
      `${fmt(f.frames, 0)} in ${fmt(x.seconds, 1)} s`,
      `**${fmt(f.fps, 1)}**`,
      `${ms(f.p50)} / ${ms(f.p95)}`,
      `**${ms(f.worst)}**`,
      fmt(f.longFrames, 0),
      x.scrollHeightPx <= x.viewHeightPx
        ? 'none: the table fits in view'
        : `${fmt(x.distancePx / x.rowHeightPx, 0)} (${x.rowsFollowed ? 'yes' : '**no**'})`,
      cores(x.load?.chromium.renderer),
    ];
  };
  out.push(
    table(
      [
        'table',
        'rows',
        'frames',
        'fps',
        'frame p50 / p95',
        'worst frame',
        'long frames',
        'rows passed (rows followed)',
        'renderer cores',
      ],
      ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
      [scrollRow('Nodes', r.scroll.nodes), scrollRow('Pods', r.scroll.pods)],
    ),
  );
  out.push('');
  out.push(
    `CPU while the Nodes table scrolled: ${loadText(r.scroll.nodes?.load)}. While the Pods table scrolled: ${loadText(r.scroll.pods?.load)}.`,
  );
  out.push('');
  for (const [view, x] of [
    ['Nodes', r.scroll.nodes],
    ['Pods', r.scroll.pods],
  ] as const) {
    if (!x?.profile) continue;
    out.push(
      `Where the page's main thread spent the ${view} scroll (V8 sampling profiler through CDP, self time in percent of ` +
        `all samples, idle included; the profiler slows the page, so this run's fps is lower than without --profile; ` +
        `profile: \`${x.profile.path}\`):`,
    );
    out.push('');
    out.push(
      table(
        ['function (self time)', '%'],
        ['l', 'r'],
        x.profile.top.map((t) => [`\`${t.fn}\``, fmt(t.selfPct, 1)]),
      ),
    );
    out.push('');
  }

  // ---- event → screen
  out.push('### Watch event → screen');
  out.push('');
  out.push(
    `${s.samples} changes of each kind, one at a time (300–800 ms apart), made through the API and stamped by the bench ` +
      "(Date.now()) just before the write call; in the page, the bridge's WebSocket message with the watch event stamped as " +
      "the page handles it (a listener added before the GUI's own: **watch event**), then the change seen by a MutationObserver " +
      '(the DOM) and the start of the next animation frame (the screen), with the same clock. Watch event → screen is the ' +
      "GUI's share (the store's batching, ≤ 16 ms, and the render) and what the goal is about; write → watch event is the " +
      "server's and the bridge's (the bench's own informer, gRPC on a connection of its own, saw each change too). " +
      '**Pod**: a pod created in a namespace the Pods view is filtered to (a new row). ' +
      `**Node**: ${r.latency.nodes ? `\`${r.latency.nodes.node}\`` : 'the first node of the Nodes table'} cordoned and uncordoned in turn (its Status cell). ` +
      (s.samples < 100 ? `With ${s.samples} samples, p99 is the largest (nearest rank).` : ''),
  );
  out.push('');
  const latRows = (label: string, samples: ChangeSample[] | undefined) => {
    if (!samples) return [[label, 'n/a', 'n/a', 'n/a', 'n/a', 'n/a']];
    const t = stageTimes(samples);
    const row = (what: string, v: number[], bold = false) => {
      const d = dist(v);
      const b = (x: string) => (bold ? `**${x}**` : x);
      return [
        `${label}: ${what}`,
        `${d.n}${what.includes('screen') && t.missed ? ` (${t.missed} missed)` : ''}`,
        b(ms(d.p50)),
        ms(d.p90),
        b(ms(d.p99)),
        ms(d.max),
      ];
    };
    return [
      row('the write call', t.call),
      row('write → watch event (bench)', t.watch),
      row('write → watch event in the page', t.pageEvent),
      row('write → in the DOM', t.dom),
      row('write → screen (next frame)', t.screen),
      row('watch event in the page → screen', t.eventToScreen, true),
    ];
  };
  out.push(
    table(
      ['change: stage', 'samples', 'p50', 'p90', 'p99', 'max'],
      ['l', 'r', 'r', 'r', 'r', 'r'],
      [...latRows('Pod', r.latency.pods), ...latRows('Node', r.latency.nodes?.samples)],
    ),
  );
  out.push('');
  out.push(`CPU meanwhile: ${loadText(r.latency.load)}.`);
  out.push('');

  // ---- heap
  const idle = r.idle;
  out.push('### JS heap, idle with live updates');
  out.push('');
  if (idle) {
    const v = heapVerdict(idle.readings);
    out.push(
      `The page left on the ${s.idleView === 'pods' ? 'Pods' : 'Nodes'} view for ${fmt(s.idleMs / 60_000, 1)} min while the fleet ` +
        `heartbeats and posts status and ${fmt(s.churnPerSec, 0)} pod changes a second arrive; at the start and every ` +
        `${fmt(s.heapEveryMs / 60_000, 1)} min: HeapProfiler.collectGarbage, then Runtime.getHeapUsage (the JS heap still ` +
        "reachable), Memory.getDOMCounters, and the renderer processes' RSS from /proc. " +
        `Least-squares slope of the heap over the whole period: ${fmt(v.slope, 3)} MiB/min; over its second half (after the ` +
        `page's warm-up): **${fmt(v.secondHalfSlope, 3)} MiB/min**, ${fmt(v.sustainedGrowthMiB, 2)} MiB over the period. "Flat" = ` +
        `that sustained growth ≤ ${fmt(FLAT_SHARE * 100, 0)} % of the first reading or ${FLAT_MIN_MIB} MiB, whichever is more ` +
        `(here ${fmt(v.boundMiB, 2)} MiB).`,
    );
    out.push('');
    out.push(
      table(
        [
          'min',
          'JS heap used (after GC)',
          'JS heap allocated',
          'Blink heap',
          'DOM nodes',
          'JS listeners',
          'renderer RSS',
        ],
        ['r', 'r', 'r', 'r', 'r', 'r', 'r'],
        idle.readings.map((x) => [
          fmt(x.atMs / 60_000, 1),
          `${fmt(x.usedBytes / MiB, 2)} MiB`,
          `${fmt(x.totalBytes / MiB, 1)} MiB`,
          `${fmt(x.embedderBytes / MiB, 1)} MiB`,
          fmt(x.domNodes, 0),
          fmt(x.jsEventListeners, 0),
          `${fmt(x.rendererRssBytes / MiB, 0)} MiB`,
        ]),
      ),
    );
    out.push('');
    out.push(`CPU over the idle period: ${loadText(idle.load)}.`);
    out.push('');
  } else out.push('n/a (the run did not get there).\n');

  // ---- notes
  const notes: string[] = [];
  if (r.churn)
    notes.push(
      `Pod changes made: ${fmt(r.churn.patches, 0)}${r.churn.failures ? `, ${r.churn.failures} failed (${r.churn.firstError?.slice(0, 160)})` : ''}.`,
    );
  for (const p of r.problems) {
    const total = [...p.problems.values()].reduce((a, b) => a + b, 0);
    if (total)
      notes.push(
        `${p.name} logged ${total} lines at warn or above: ` +
          [...p.problems.entries()]
            .sort((a, b) => b[1] - a[1])
            .slice(0, 3)
            .map(([k, n]) => `${n}× ${k.slice(0, 140)}`)
            .join('; ') +
          '.',
      );
  }
  if (notes.length) {
    out.push(notes.join(' '));
    out.push('');
  }
  if (r.error) {
    out.push(`**The run failed: ${r.error}**`);
    out.push('');
  }

  // ---- goals
  out.push('### Goals (tracker issue 9)');
  out.push('');
  const goals: string[][] = [];
  for (const [view, list] of [
    ['Nodes', r.firstRender.nodes],
    ['Pods', r.firstRender.pods],
  ] as const)
    goals.push([
      `${view}: time to first render (1st round)`,
      list.length ? ms(list[0].readyMs) : 'n/a',
      '– (no goal set)',
      '–',
    ]);
  for (const [view, x] of [
    ['Nodes', r.scroll.nodes],
    ['Pods', r.scroll.pods],
  ] as const) {
    const f = x ? scrollFigures(x) : undefined;
    goals.push(
      goalRow(
        `${view}: scroll frame rate (worst frame ${f ? ms(f.worst) : 'n/a'}, ${f ? f.longFrames : 'n/a'} long)`,
        f ? `${fmt(f.fps, 1)} fps` : 'n/a',
        `≥ ${GOAL_FPS} fps`,
        f ? f.fps >= GOAL_FPS : undefined,
      ),
    );
  }
  for (const [label, samples] of [
    ['Pod created', r.latency.pods],
    ['Node cordoned/uncordoned', r.latency.nodes?.samples],
  ] as const) {
    const t = samples ? stageTimes(samples) : undefined;
    const d = t ? dist(t.eventToScreen) : undefined;
    // Every change shown, and each one's watch event found in the page: else no verdict.
    const complete = !!t && !t.missed && t.eventToScreen.length === t.screen.length;
    const unmatched = t ? t.screen.length - t.eventToScreen.length : 0;
    for (const [which, value] of [
      ['p50', d?.p50],
      ['p99', d?.p99],
    ] as const)
      goals.push(
        goalRow(
          `${label}: watch event → screen, ${which}${t?.missed ? ` (${t.missed} never shown)` : ''}` +
            (unmatched ? ` (${unmatched} watch events not found in the page)` : ''),
          ms(value ?? NaN),
          `≤ ${GOAL_EVENT_TO_SCREEN_MS} ms`,
          value !== undefined && Number.isFinite(value) && complete
            ? value <= GOAL_EVENT_TO_SCREEN_MS
            : undefined,
        ),
      );
    const w = t ? dist(t.screen) : undefined;
    goals.push([
      `${label}: write → screen, p99 (the server's share included)`,
      ms(w?.p99 ?? NaN),
      '– (no goal set)',
      '–',
    ]);
  }
  if (idle) {
    const v = heapVerdict(idle.readings);
    goals.push(
      goalRow(
        `JS heap after GC over ${fmt(s.idleMs / 60_000, 1)} min idle with live updates: ${fmt(idle.readings[0].usedBytes / MiB, 1)} → ` +
          `${fmt(idle.readings[idle.readings.length - 1].usedBytes / MiB, 1)} MiB`,
        `${fmt(v.secondHalfSlope, 3)} MiB/min (second half; whole period ${fmt(v.slope, 3)})`,
        `flat (sustained growth ≤ ${fmt(v.boundMiB, 2)} MiB over the period)`,
        v.flat,
      ),
    );
  } else goals.push(goalRow('JS heap after GC, idle with live updates', 'n/a', 'flat', undefined));
  out.push(table(['target', 'value', 'goal', 'result'], ['l', 'r', 'l', 'l'], goals));
  return out.join('\n') + '\n';
}

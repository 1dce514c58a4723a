/**
 * `npm run bench:gui` (tracker issue 9): the GUI in a browser against a big cluster — with
 * 5,000 hollow nodes and 50,000 pods, the time to first render of the Nodes and Pods views,
 * the scroll frame rate, the latency from a watch event to the screen, and the JS heap over
 * 10 minutes idle with live updates; the figures, the machine and the date go to
 * BENCHMARKS.md, in the section of this benchmark (replaced on every run). Goals: scroll ≥ 50
 * fps, event → screen ≤ 100 ms, heap flat.
 *
 *   1. `kubelab server --ui` (SQLite, its in-process controllers, the GUI on a free loopback
 *      port) in a child process; --nodes hollow nodes (5,000) joined ahead (16 at a time), then
 *      run by --agent-processes `kubelab-agent --hollow N` child processes (2 × 2,500) at the
 *      agent's defaults; the bench waits until every node is Ready.
 *   2. --pods pods (50,000) created through gRPC (32 writers) with spec.nodeName set, spread
 *      evenly (10 per node): they land at once, without the scheduler, and the hollow agents
 *      start them; the bench waits until the agents report them all Running (capped by
 *      --running-wait; past the cap it says so and measures anyway).
 *   3. Debian's Chromium (headless, the e2e tests' flags, playwright-core) opens the link the
 *      server prints; signed in once the overview says "Live" and counts every node.
 *      - first render: a click on Nodes, then on Pods, --rounds times (3): click → the first
 *        frame with rows and the full row count (lib/gui-page.ts, timed in the page);
 *      - from here on a trickle of --churn pod changes per second (2) joins the fleet's own
 *        heartbeats and status writes;
 *      - scroll: each table scrolled for --scroll (5 s) at --scroll-speed px/s (3,000) by
 *        setting scrollTop every animation frame; fps, frame times, long frames (> 50 ms);
 *      - watch event → screen: --samples (30) pods created in a namespace the Pods view is
 *        filtered to, and as many cordons/uncordons of the first node of the Nodes table;
 *        write call (bench clock) → DOM (MutationObserver) → next frame (page clock, same
 *        machine), beside write → the bench's own informer;
 *      - heap: the page left on --idle-view (pods) for --idle (10 min); a forced GC and the JS
 *        heap (CDP) at the start and every --heap-every (1 min); the slope says whether it is flat.
 *
 * The bench also watches the rest of the machine (busy CPU, other benchmarks): a run during which
 * other benchmarks ran says so in bold and is not written unless --append-anyway is given; a
 * failed run is never written.
 *
 * Options: --no-append (print only), --append-anyway, --nodes 5000, --pods 50000,
 * --agent-processes 2, --rounds 3, --scroll 5s, --scroll-speed 3000, --samples 30, --idle 10m,
 * --heap-every 1m, --idle-view pods|nodes, --churn 2 (0: none), --running-wait (default 5 min +
 * 10 ms per pod), --settle 10s, --join-concurrency 16, --create-concurrency 32, --profile DIR
 * (a CPU profile of the page while each table scrolls; its top functions go in the report).
 * A development run: `npm run bench:gui -- --nodes 100 --pods 1000 --idle 1m --no-append`.
 * Build the GUI first (`npx electron-vite build`).
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseDurationMs } from '../../agent/config.js';
import { freePort } from '../support/etcd.js';
import { REPO_ROOT, startChildControlPlane } from './lib/child.js';
import { checkAlive, type Proc } from './lib/childproc.js';
import {
  checkBrowserPrerequisites,
  guiUrl,
  launchBrowser,
  profilePage,
  type GuiBrowser,
} from './lib/gui-browser.js';
import { hollowGroups, startFleet } from './lib/gui-fleet.js';
import { idlePeriod } from './lib/gui-idle.js';
import { ServerHealth } from './lib/gui-health.js';
import { LoadMeter } from './lib/gui-load.js';
import { describeStages, nodeChangeLatency, podChangeLatency } from './lib/gui-latency.js';
import {
  NODES_VIEW,
  PODS_VIEW,
  scrollTable,
  startChangeObserver,
  stopChangeObserver,
  timeFirstRender,
  type TableView,
} from './lib/gui-page.js';
import { createBulkPods, ensureNamespace, PodChurn, waitForRunning } from './lib/gui-pods.js';
import { renderGuiSection, scrollFigures, type GuiResults, type GuiSettings } from './lib/gui-report.js';
import { machineInfo } from './lib/machine.js';
import { otherBenchmarks } from './lib/others.js';
import { replaceSection } from './lib/report.js';
import { Cleanup, log } from './lib/run.js';
import { fmt, nowMs, sleep } from './lib/stats.js';

// ------------------------------------------------------------------------------ settings

interface Args extends GuiSettings {
  append: boolean;
  /** Append even if other benchmarks ran meanwhile (their load skews every figure). */
  appendAnyway: boolean;
  runningWaitMs: number;
  settleMs: number;
  /** Profile the page while each table scrolls, into this folder. */
  profileDir?: string;
}

/** The agent's default --max-pods: more per node would not run. */
const MAX_PODS_PER_NODE = 110;
const BULK_NAMESPACE = 'gui-bench';
const LATENCY_NAMESPACE = 'gui-latency';

function parseArgs(argv: string[]): Args {
  const args: Args = {
    append: true,
    appendAnyway: false,
    nodes: 5000,
    pods: 50_000,
    agentProcesses: 2,
    podsPerNode: 0,
    rounds: 3,
    scrollMs: 5000,
    scrollPxPerSec: 3000,
    samples: 30,
    idleMs: 10 * 60_000,
    heapEveryMs: 60_000,
    idleView: 'pods',
    churnPerSec: 2,
    joinConcurrency: 16,
    createConcurrency: 32,
    runningWaitMs: NaN,
    settleMs: 10_000,
    argv,
  };
  const whole = (v: string, flag: string, min = 1) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < min) throw new Error(`${flag} takes a whole number of at least ${min}`);
    return n;
  };
  const duration = (v: string, flag: string) => parseDurationMs(/^\d+(\.\d+)?$/.test(v) ? `${v}s` : v, flag);
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === '--no-append') args.append = false;
    else if (a === '--append-anyway') args.appendAnyway = true;
    else if (a === '--nodes') args.nodes = whole(value(), a);
    else if (a === '--pods') args.pods = whole(value(), a);
    else if (a === '--agent-processes') args.agentProcesses = whole(value(), a);
    else if (a === '--rounds') args.rounds = whole(value(), a);
    else if (a === '--scroll') args.scrollMs = duration(value(), a);
    else if (a === '--scroll-speed') args.scrollPxPerSec = whole(value(), a);
    else if (a === '--samples') args.samples = whole(value(), a);
    else if (a === '--idle') args.idleMs = duration(value(), a);
    else if (a === '--heap-every') args.heapEveryMs = duration(value(), a);
    else if (a === '--idle-view') {
      const v = value();
      if (v !== 'pods' && v !== 'nodes') throw new Error('--idle-view takes pods or nodes');
      args.idleView = v;
    } else if (a === '--churn') args.churnPerSec = whole(value(), a, 0);
    else if (a === '--running-wait') args.runningWaitMs = duration(value(), a);
    else if (a === '--settle') args.settleMs = duration(value(), a);
    else if (a === '--join-concurrency') args.joinConcurrency = whole(value(), a);
    else if (a === '--create-concurrency') args.createConcurrency = whole(value(), a);
    else if (a === '--profile') args.profileDir = value();
    else throw new Error(`unknown option ${a}; see the comment at the top of test/bench/gui.bench.ts`);
  }
  if (args.agentProcesses > args.nodes) throw new Error('--agent-processes must not exceed --nodes');
  if (args.pods > args.nodes * MAX_PODS_PER_NODE)
    throw new Error(
      `${args.pods} pods do not fit on ${args.nodes} nodes of ${MAX_PODS_PER_NODE} pods each (the agent's --max-pods)`,
    );
  if (args.heapEveryMs > args.idleMs) throw new Error('--heap-every must not exceed --idle');
  args.podsPerNode = Math.ceil(args.pods / args.nodes);
  // 50,000 pods: ~13 min, for the hollow agents' status writes through a server busy with the rest.
  if (!Number.isFinite(args.runningWaitMs)) args.runningWaitMs = 5 * 60_000 + args.pods * 10;
  return args;
}

// ------------------------------------------------------------------------------ the run

interface Refs {
  procs: Proc[];
  churn?: PodChurn;
  /** Other benchmarks seen while figures that depend on speed were taken (or at the start or end). */
  others: Set<string>;
  /** Those seen only in the idle phase, which measures the page's heap after GC, not time. */
  othersIdle: Set<string>;
  inIdle: boolean;
}

/** Navigates to a table view and waits for its rows. */
async function openView(g: GuiBrowser, t: TableView): Promise<void> {
  await g.page.click(`[data-view="${t.view}"]`);
  await g.page
    .locator(`[data-testid="${t.testid}"] [role="grid"] [${t.rowAttr}]`)
    .first()
    .waitFor({ timeout: 120_000 });
  // Let the first render settle (its long frame is the first-render figure, not the scroll's).
  await sleep(1000);
}

async function runBench(args: Args, cleanup: Cleanup, tmp: string, r: GuiResults, ref: Refs): Promise<void> {
  checkBrowserPrerequisites();
  if (args.profileDir) mkdirSync(args.profileDir, { recursive: true });
  const uiPort = await freePort();
  const metricsPort = await freePort();
  log('starting kubelab server --ui (SQLite, its in-process controllers)');
  const cp = await startChildControlPlane({
    store: 'sqlite',
    // Given after child.ts's own --metrics-listen, so this one wins: the bench reads it.
    serverArgs: ['--ui-listen', `127.0.0.1:${uiPort}`, '--metrics-listen', `127.0.0.1:${metricsPort}`],
    startTimeoutMs: 120_000,
  });
  cleanup.add('kubelab server', () => cp.stop());
  const health = new ServerHealth(metricsPort, () => ref.procs);
  const meter = new LoadMeter(new Map([['server', cp.pid]]), health);
  cleanup.add('sampler', () => meter.stop());

  // ---- the fleet
  const groups = hollowGroups(args.nodes, args.agentProcesses, tmp);
  r.agentProcs = groups.map((g) => ({ name: g.prefix, count: g.count }));
  const fleet = await startFleet(cp, groups, args.joinConcurrency, cleanup, health);
  ref.procs = fleet.procs;
  // This process is counted apart by the sampler (as ours, not others'): not added here.
  for (const p of fleet.procs) meter.sampler.add(p.name, p.pid);
  r.joinSeconds = fleet.joinSeconds;
  r.readySeconds = fleet.readySeconds;

  // ---- the pods
  const admin = cp.client(true);
  await ensureNamespace(admin, BULK_NAMESPACE);
  r.create = await createBulkPods(
    admin,
    BULK_NAMESPACE,
    args.pods,
    fleet.nodeNames,
    args.createConcurrency,
    fleet.procs,
    health,
  );
  r.running = await waitForRunning(
    cp,
    BULK_NAMESPACE,
    args.pods,
    args.runningWaitMs,
    fleet.procs,
    cleanup,
    health,
  );
  await health.lagMs(); // a set-up shorter than one progress line has no reading yet
  r.setupLagMs = health.worstLagMs;
  log(`settling for ${fmt(args.settleMs / 1000, 0)} s`);
  await sleep(args.settleMs);
  checkAlive(fleet.procs);

  // ---- the browser
  const g = await launchBrowser();
  cleanup.add('chromium', () => g.close());
  r.browserVersion = g.version;
  log(`Chromium ${g.version}: opening the GUI`);
  const t0 = nowMs();
  await g.page.goto(guiUrl(uiPort, cp.dataDir));
  try {
    await g.page.waitForFunction(
      // Every store listed ("Live") and every node in the Nodes store: the tile reads "<ready>/<total>".
      (n) =>
        document.querySelector('[data-testid="live-state"]')?.textContent?.trim() === 'Live' &&
        new RegExp(`\\d+/${n}(\\D|$)`).test(
          document.querySelector('[data-testid="nodes-ready"]')?.textContent ?? '',
        ),
      args.nodes,
      { timeout: 5 * 60_000, polling: 100 },
    );
  } catch {
    const state = await g.page
      .locator('main')
      .first()
      .innerText()
      .catch(() => '');
    throw new Error(
      `the GUI did not get live with ${args.nodes} nodes within 5 min; it shows: ${state.slice(0, 300)}`,
    );
  }
  r.signInMs = nowMs() - t0;
  log(`signed in: live with every node counted ${fmt(r.signInMs / 1000, 1)} s after the link was opened`);
  await sleep(2000);

  // ---- time to first render
  const renderTimeout = 120_000;
  for (let round = 0; round < args.rounds; round++) {
    const n = await timeFirstRender(g.page, NODES_VIEW, args.nodes, renderTimeout);
    r.firstRender.nodes.push(n);
    await sleep(1000);
    const p = await timeFirstRender(g.page, PODS_VIEW, args.pods, renderTimeout);
    r.firstRender.pods.push(p);
    log(
      `first render, round ${round + 1}: Nodes ${fmt(n.readyMs, 0)} ms (longest frame ${fmt(n.longestFrameMs, 0)} ms), ` +
        `Pods ${fmt(p.readyMs, 0)} ms (longest frame ${fmt(p.longestFrameMs, 0)} ms)`,
    );
    await sleep(1000);
  }

  // ---- live updates from here on
  const churn = new PodChurn(admin, BULK_NAMESPACE, args.pods, args.churnPerSec);
  ref.churn = churn;
  churn.start();
  cleanup.add('pod churn', () => churn.stop());

  // ---- scroll
  for (const [t, rows] of [
    [NODES_VIEW, args.nodes],
    [PODS_VIEW, args.pods],
  ] as const) {
    await openView(g, t);
    const stopProfile = args.profileDir
      ? await profilePage(g, join(args.profileDir, `page-scroll-${t.view}.cpuprofile`))
      : undefined;
    const { value, load } = await meter.during(g, () =>
      scrollTable(g.page, t, args.scrollMs, args.scrollPxPerSec),
    );
    const result = { ...value, rows, load, profile: await stopProfile?.() };
    if (t === NODES_VIEW) r.scroll.nodes = result;
    else r.scroll.pods = result;
    const f = scrollFigures(value);
    log(
      `scroll ${t.view}: ${fmt(f.fps, 1)} fps, worst frame ${fmt(f.worst, 0)} ms, ${f.longFrames} frames over 50 ms, ` +
        `${fmt(value.distancePx / value.rowHeightPx, 0)} rows passed${value.rowsFollowed ? '' : ' (THE ROWS DID NOT FOLLOW THE SCROLL)'}`,
    );
    checkAlive(fleet.procs);
  }

  // ---- watch event → screen
  await startChangeObserver(g.page);
  const latency = await meter.during(g, async () => {
    const pods = await podChangeLatency(
      g.page,
      cp,
      admin,
      LATENCY_NAMESPACE,
      fleet.nodeNames,
      args.samples,
      cleanup,
    );
    log(describeStages('pod created', pods));
    const nodes = await nodeChangeLatency(g.page, cp, admin, args.samples, cleanup);
    log(describeStages('node cordoned', nodes.samples));
    return { pods, nodes };
  });
  await stopChangeObserver(g.page);
  r.latency = { ...latency.value, load: latency.load };
  checkAlive(fleet.procs);

  // ---- idle
  const idleView = args.idleView === 'pods' ? PODS_VIEW : NODES_VIEW;
  await openView(g, idleView);
  ref.inIdle = true;
  const idle = await meter.during(g, () =>
    idlePeriod(
      g,
      args.idleMs,
      args.heapEveryMs,
      () => checkAlive(fleet.procs),
      () => {
        const others = otherBenchmarks();
        for (const o of others) ref.othersIdle.add(o);
        return `${fmt(churn.patches, 0)} pod changes so far${others.length ? `; OTHER BENCHMARKS RUNNING: ${others.join(' | ')}` : ''}`;
      },
    ),
  );
  ref.inIdle = false;
  r.idle = { ...idle.value, load: idle.load };
  await cleanup.now('pod churn');
}

// ------------------------------------------------------------------------------ main

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const started = new Date();
  const t0 = nowMs();
  const cleanup = new Cleanup();
  let signals = 0;
  const fail = (why: string, code: number) => {
    // Ctrl-C reaches this process twice under `npm run`: only a third signal skips the cleanup.
    if (++signals > 2) process.exit(code);
    if (signals > 1) return;
    log(why);
    void cleanup.runAll().finally(() => process.exit(code));
  };
  process.on('SIGINT', () => fail('interrupted; cleaning up', 130));
  process.on('SIGTERM', () => fail('terminated; cleaning up', 143));
  // Set-up (joins, Ready, creates, the Running cap), the browser's phases, the idle period.
  const budget =
    15 * 60_000 +
    args.nodes * 200 +
    args.pods * 10 +
    args.runningWaitMs +
    args.idleMs +
    2 * args.samples * 20_000;
  const watchdog = setTimeout(
    () => fail(`the benchmark took more than ${fmt(budget / 60_000, 0)} minutes; giving up`, 1),
    budget,
  );

  const tmp = mkdtempSync(join(tmpdir(), 'kubelab-bench-gui-'));
  cleanup.add('temp folder', () => rmSync(tmp, { recursive: true, force: true }));
  const machine = await machineInfo('', REPO_ROOT);
  const loadStart = loadavg()[0];
  const results: GuiResults = {
    agentProcs: [],
    firstRender: { nodes: [], pods: [] },
    scroll: {},
    latency: {},
    othersSeen: [],
    othersInIdleOnly: [],
    loadAvg: { start: loadStart, end: NaN },
    problems: [],
  };
  const ref: Refs = { procs: [], others: new Set(otherBenchmarks()), othersIdle: new Set(), inIdle: false };
  const othersTimer = setInterval(() => {
    for (const o of otherBenchmarks()) (ref.inIdle ? ref.othersIdle : ref.others).add(o);
  }, 10_000);
  log(
    `load average ${fmt(loadStart, 2)}${ref.others.size ? `; other benchmarks running: ${[...ref.others].join(' | ')}` : ''}`,
  );
  try {
    await runBench(args, cleanup, tmp, results, ref);
  } catch (err) {
    results.error = (err as Error).message;
    log(`failed: ${results.error}`);
  } finally {
    clearTimeout(watchdog);
    clearInterval(othersTimer);
    if (ref.churn)
      results.churn = {
        patches: ref.churn.patches,
        failures: ref.churn.failures,
        firstError: ref.churn.firstError,
      };
    log('stopping everything');
    await cleanup.runAll();
  }
  results.loadAvg.end = loadavg()[0];
  results.othersSeen = [...ref.others];
  results.othersInIdleOnly = [...ref.othersIdle].filter((o) => !ref.others.has(o));
  results.problems = ref.procs.map((p) => ({ name: p.name, problems: p.problems }));

  const section = renderGuiSection(machine, args, results, started, (nowMs() - t0) / 1000);
  process.stdout.write('\n' + section);
  if (args.append && results.error) log('not written to BENCHMARKS.md: the run failed');
  else if (args.append && results.othersSeen.length && !args.appendAnyway)
    log(
      `not written to BENCHMARKS.md: other benchmarks ran meanwhile (${results.othersSeen.join(' | ')}); ` +
        'run again on a quiet machine, or pass --append-anyway',
    );
  else if (args.append) {
    const path = join(REPO_ROOT, 'BENCHMARKS.md');
    const replaced = replaceSection(path, 'gui', section);
    log(`${replaced ? 'replaced the gui section of' : 'added a gui section to'} ${path}`);
  }
  process.exitCode = results.error ? 1 : 0;
}

main().then(
  () => process.exit(process.exitCode ?? 0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);

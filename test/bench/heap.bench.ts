/**
 * `npm run bench:heap` (tracker issue 23, item 1): where a control plane's heap goes. A fresh
 * `kubelab server` child (SQLite, its in-process controllers) with --nodes hollow nodes (1,000)
 * run in this process, --pods-per-node DaemonSet pods on each (2); once every pod is available
 * and --settle (90 s: longer than the watch cache's 75 s history window) has passed, a forced
 * GC and a heap snapshot of the server over the inspector, aggregated by constructor. It says
 * what the heap holds per cached Node-or-Pod, which constructors hold it, and what each part
 * of the server keeps alive (retained sizes: the watch cache of each kind, the informers, the
 * metrics history…). The same for the hollow fleet in this process, per hollow node. And where
 * the server allocates at steady state (V8's sampling heap profiler over the settle's last
 * 30 s: issue 23's item 2).
 *
 * Snapshots are parsed whole: keep the fleet to a few thousand nodes (a 5,000-node server's
 * snapshot is larger than a JavaScript string can be).
 *
 * Options: --nodes 1000, --pods-per-node 2, --settle 90s, --label TEXT (named in the heading,
 * e.g. "before"), --no-append (print only), --allocation-profile FILE (the raw sampling profile,
 * for Chrome DevTools' Memory tab: name it *.heapprofile), --survivors (sample only what
 * outlived a scavenge: what the young generation promotes, the old generation's garbage to be).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { buildAgentProgram, configFromFlags } from '../../agent/cli.js';
import { HollowFleet } from '../../agent/hollow.js';
import { createAgentLogger } from '../../agent/logger.js';
import type { DaemonSet, Namespace } from '../../client/api/types.js';
import { freePort } from '../support/etcd.js';
import { createJoinToken, REPO_ROOT, startChildControlPlane } from './lib/child.js';
import { changedNote, machineInfo } from './lib/machine.js';
import { connectInspector, ownInspector, type InspectorSession } from './lib/inspector.js';
import { byConstructor, holders, type HeapSnapshot, type Holder } from './lib/heapsnapshot.js';
import { appendSection, table } from './lib/report.js';
import { scrape, scrapeDelta, type Scrape } from './lib/scrape.js';
import { fmt, sleep } from './lib/stats.js';

const { values: v } = parseArgs({
  options: {
    nodes: { type: 'string', default: '1000' },
    'pods-per-node': { type: 'string', default: '2' },
    settle: { type: 'string', default: '90s' },
    label: { type: 'string', default: '' },
    'no-append': { type: 'boolean', default: false },
    'allocation-profile': { type: 'string' },
    survivors: { type: 'boolean', default: false },
  },
});
const nodes = Number(v.nodes);
const podsPerNode = Number(v['pods-per-node']);
const settleMs = Number(/^(\d+)s$/.exec(v.settle ?? '')?.[1] ?? NaN) * 1000;
if (!(nodes > 0) || !(podsPerNode >= 0) || !(settleMs >= 0))
  throw new Error('--nodes N, --pods-per-node N and --settle Ns (seconds) are required to be numbers');

function log(message: string): void {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

/** A heap snapshot over the inspector: a forced GC first, then the snapshot, parsed. */
async function heapSnapshot(inspector: InspectorSession): Promise<HeapSnapshot> {
  const chunks: string[] = [];
  inspector.on('HeapProfiler.addHeapSnapshotChunk', (p) => chunks.push(p.chunk as string));
  await inspector.call('HeapProfiler.collectGarbage');
  await inspector.call('HeapProfiler.takeHeapSnapshot', { reportProgress: false });
  return JSON.parse(chunks.join('')) as HeapSnapshot;
}

interface SamplingNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: SamplingNode[];
}

/**
 * Where the server allocates: V8's sampling heap profiler over `ms`, with objects collected
 * meanwhile kept in (includeObjectsCollectedBy*GC), so that it counts what was allocated, not
 * what is left. Bytes per second, per function (kubelab's files by path, others by package).
 */
async function allocationSites(
  inspector: InspectorSession,
  ms: number,
): Promise<{ bytesPerSecond: number; sites: Array<{ fn: string; bytesPerSecond: number }> }> {
  await inspector.call('HeapProfiler.startSampling', {
    samplingInterval: 16_384,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: !v.survivors,
  });
  await sleep(ms);
  const { profile } = await inspector.call<{ profile: { head: SamplingNode } }>('HeapProfiler.stopSampling');
  if (v['allocation-profile']) {
    writeFileSync(v['allocation-profile'], JSON.stringify(profile));
    log(`allocation profile written to ${v['allocation-profile']}`);
  }
  const bySite = new Map<string, number>();
  let total = 0;
  const walk = (n: SamplingNode) => {
    if (n.selfSize > 0) {
      const { functionName, url, lineNumber } = n.callFrame;
      const file = url.replace(/^file:\/\//, '');
      const at = file.includes('/node_modules/')
        ? file.slice(file.lastIndexOf('/node_modules/') + 14)
        : file.startsWith(REPO_ROOT)
          ? file.slice(REPO_ROOT.length + 1)
          : file || '(native)';
      const key = `${functionName || '(anonymous)'} ${at}:${lineNumber + 1}`;
      bySite.set(key, (bySite.get(key) ?? 0) + n.selfSize);
      total += n.selfSize;
    }
    for (const c of n.children) walk(c);
  };
  walk(profile.head);
  const perSecond = (bytes: number) => bytes / (ms / 1000);
  return {
    bytesPerSecond: perSecond(total),
    sites: [...bySite]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 25)
      .map(([fn, bytes]) => ({ fn, bytesPerSecond: perSecond(bytes) })),
  };
}

/** Requests that took a flow-control seat between two readings of /metrics. */
function clientRequests(before: Scrape, after: Scrape): number {
  let n = 0;
  for (const series of after.keys())
    if (series.startsWith('apiserver_flowcontrol_request_execution_seconds_count'))
      n += scrapeDelta(before, after, series);
  return n;
}

/** The parts of a hollow fleet whose retained size the bench reports. */
const FLEET_HOLDERS = [
  'HollowFleet',
  'NodeAgent',
  'NodeStatusManager',
  'NodeLeaseController',
  'NodeMetricsReporter',
  'PodManager',
  'PodStatusManager',
  'PodWorker',
  'HollowRuntime',
  'SharedIndexInformer',
  'Reflector',
  'Connection',
  'FailoverTransport',
  'AgentTunnelClient',
  'EventRecorder',
  'ControlPlaneContact',
  'HollowMachineReader',
];

/** What the hollow fleet (this process) holds per node, and which of its parts hold it. */
async function fleetHeap(): Promise<string[]> {
  log('taking a heap snapshot of the hollow fleet (this process)');
  let snap: HeapSnapshot;
  try {
    const inspector = ownInspector();
    snap = await heapSnapshot(inspector);
    inspector.close();
  } catch (err) {
    // A snapshot larger than a JavaScript string can hold.
    log(`no snapshot of the fleet: ${(err as Error).message}`);
    return [
      `The hollow fleet's snapshot could not be read (${(err as Error).message}): run fewer nodes for it.`,
      '',
    ];
  }
  const { total, count } = byConstructor(snap);
  const held = holders(snap, FLEET_HOLDERS);
  return [
    `**The hollow fleet (the bench process, ${fmt(nodes, 0)} nodes): heap ${fmt(total / 1048576, 1)} MiB in ${fmt(count, 0)} heap objects, ` +
      `${fmt(total / nodes / 1024, 1)} KiB per hollow node** (the bench's own objects included). What its parts keep alive:`,
    '',
    holdersTable(held, nodes, 'hollow node'),
    '',
  ];
}

function holdersTable(held: Holder[], per: number, perWhat: string): string {
  return table(
    ['holder', 'instances', 'retained MiB', `bytes per ${perWhat}`, 'largest fields (MiB)'],
    ['l', 'r', 'r', 'r', 'l'],
    held
      .filter((h) => h.retained >= 0.1 * 1048576)
      .map((h) => [
        h.what,
        fmt(h.instances, 0),
        fmt(h.retained / 1048576, 1),
        fmt(h.retained / per, 0),
        [...h.fields]
          .sort((a, b) => b[1] - a[1])
          .filter(([, size]) => size >= 0.1 * 1048576)
          .slice(0, 4)
          .map(([name, size]) => `${name} ${fmt(size / 1048576, 1)}`)
          .join(', '),
      ]),
  );
}

/** The parts of the server whose retained size the bench reports. */
const HOLDERS = [
  'WatchCache',
  'NodeMetricsHistory',
  'SharedIndexInformer',
  'SchedulerCache',
  'GarbageCollector',
  'NodeLifecycleController',
  'EventExpiry',
  'Cacher',
  'ApiServer',
];

async function main(): Promise<void> {
  const started = new Date();
  const inspect = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'kubelab-heap-'));
  log(`starting the server (inspector on 127.0.0.1:${inspect})`);
  const cp = await startChildControlPlane({
    store: 'sqlite',
    dataDir,
    startTimeoutMs: 120_000,
    nodeArgs: [`--inspect=127.0.0.1:${inspect}`],
  });
  const fleetDir = mkdtempSync(join(tmpdir(), 'kubelab-heap-fleet-'));
  let fleet: HollowFleet | undefined;
  try {
    const machine = await machineInfo('http://127.0.0.1:9', REPO_ROOT);
    const token = await createJoinToken(cp);
    const flags = buildAgentProgram().opts() as Parameters<typeof configFromFlags>[0];
    process.setSourceMapsEnabled(false);
    log(`starting ${fmt(nodes, 0)} hollow nodes in this process`);
    fleet = new HollowFleet({
      count: nodes,
      prefix: 'heap',
      servers: [`https://${cp.server}`],
      dataDir: fleetDir,
      joinToken: token,
      config: (name) => configFromFlags(flags, name),
      logger: createAgentLogger('error'),
      spreadMs: 3000,
    });
    await fleet.start();
    const admin = cp.client(true);
    await admin.create<Namespace>({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'heap' } });
    for (let i = 0; i < podsPerNode; i++) {
      const app = { app: `heap-${i}` };
      await admin.create<DaemonSet>({
        apiVersion: 'apps/v1',
        kind: 'DaemonSet',
        metadata: { name: `heap-${i}`, namespace: 'heap' },
        spec: {
          selector: { matchLabels: app },
          template: { metadata: { labels: app }, spec: { containers: [{ name: 'main', image: 'busybox' }] } },
        },
      });
    }
    for (let lastLog = 0; ;) {
      const available = (await admin.list('DaemonSet', { namespace: 'heap' })).items.reduce(
        (sum, ds) => sum + (ds.status?.numberAvailable ?? 0),
        0,
      );
      if (available >= nodes * podsPerNode) break;
      if (Date.now() - lastLog > 15_000) {
        lastLog = Date.now();
        log(`${fmt(available, 0)} of ${fmt(nodes * podsPerNode, 0)} pods available`);
      }
      await sleep(2000);
    }
    admin.close();
    log(`every pod available; settling ${settleMs / 1000} s`);
    const inspector = await connectInspector(inspect);
    // The settle's last 30 s: where the server allocates at steady state.
    const sampleMs = Math.min(30_000, settleMs);
    await sleep(settleMs - sampleMs);
    log(`sampling the server's allocations for ${sampleMs / 1000} s`);
    const requestsBefore = await scrape(cp.metricsPort);
    const allocations = await allocationSites(inspector, sampleMs);
    const requestsPerSecond =
      clientRequests(requestsBefore, await scrape(cp.metricsPort)) / (sampleMs / 1000);
    const rssMiB = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${cp.pid}/status`, 'utf8'))?.[1]) / 1024;
    // The fleet's first: this process then holds no server snapshot.
    const fleetPart = await fleetHeap();
    log('taking a heap snapshot of the server');
    const snap = await heapSnapshot(inspector);
    inspector.close();
    const { total, count, rows } = byConstructor(snap);
    log('finding what each cache keeps alive');
    const held = holders(snap, HOLDERS);
    const cached = nodes * (1 + podsPerNode);
    const top = [...rows].sort((a, b) => b[1][0] - a[1][0]).slice(0, 20);
    const heading = `## ${started.toISOString().slice(0, 16).replace('T', ' ')} UTC — heap (\`npm run bench:heap\`)${v.label ? `: ${v.label}` : ''}`;
    const section = [
      heading,
      '',
      `Machine: ${machine.cpu}, ${machine.cores} cores, ${fmt(machine.ramGiB, 1)} GiB RAM; Node ${machine.node}. kubelab ${machine.commit}. ` +
        `A \`kubelab server\` child (SQLite, in-process controllers) with ${fmt(nodes, 0)} hollow nodes (in the bench process) and ` +
        `${podsPerNode} DaemonSet pods on each, ${settleMs / 1000} s after every pod was available; a forced GC, then a heap snapshot. ` +
        `Command: \`npm run bench:heap -- --nodes ${nodes} --pods-per-node ${podsPerNode}\`.` +
        (changedNote(machine) ? ` ${changedNote(machine)}` : ''),
      '',
      `**Heap ${fmt(total / 1048576, 1)} MiB in ${fmt(count, 0)} heap objects: ${fmt(total / cached / 1024, 1)} KiB and ${fmt(count / cached, 0)} heap objects per cached Node-or-Pod** ` +
        `(${fmt(cached, 0)} of them; the server's fixed costs included). Server RSS ${fmt(rssMiB, 0)} MiB before the forced GC.`,
      '',
      table(
        ['constructor or type', 'MiB', 'heap objects', 'bytes per Node-or-Pod'],
        ['l', 'r', 'r', 'r'],
        top.map(([key, [size, n]]) => [key, fmt(size / 1048576, 1), fmt(n, 0), fmt(size / cached, 0)]),
      ),
      '',
      'What each part of the server keeps alive (retained size: what freeing it would free; an object two parts both reach counts for neither), with the fields that keep the most:',
      '',
      holdersTable(held, cached, 'Node-or-Pod'),
      '',
      ...fleetPart,
      (v.survivors
        ? `**What outlived a scavenge at steady state** (the settle's last ${sampleMs / 1000} s, V8's sampling heap profiler, objects a scavenge collected left out, those a mark-compact collected counted: what the young generation promoted, and what was still young at the end): `
        : `**Allocation at steady state** (the settle's last ${sampleMs / 1000} s, V8's sampling heap profiler, objects collected meanwhile counted): `) +
        `${fmt(allocations.bytesPerSecond / 1048576, 1)} MiB/s, ${fmt(allocations.bytesPerSecond / nodes / 1024, 1)} KiB/s per hollow node; ` +
        `${fmt(requestsPerSecond, 0)} client requests/s (flow control's count: leases, node and pod status, metrics, events; the in-process controllers' calls are not requests), ` +
        `${fmt(allocations.bytesPerSecond / Math.max(1, requestsPerSecond) / 1024, 1)} KiB allocated per request. Where:`,
      '',
      table(
        ['function (file:line)', 'MiB/s', 'share'],
        ['l', 'r', 'r'],
        allocations.sites.map((site) => [
          `\`${site.fn}\``,
          fmt(site.bytesPerSecond / 1048576, 2),
          `${fmt((100 * site.bytesPerSecond) / allocations.bytesPerSecond, 1)} %`,
        ]),
      ),
      '',
    ].join('\n');
    process.stdout.write('\n' + section);
    if (!v['no-append']) {
      appendSection(join(REPO_ROOT, 'BENCHMARKS.md'), section);
      log('appended to BENCHMARKS.md');
    }
  } finally {
    await fleet?.stop();
    await cp.stop();
    rmSync(fleetDir, { recursive: true, force: true });
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);

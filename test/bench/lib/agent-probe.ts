/**
 * A preload for agent runs in agent.bench.ts (bundled to CommonJS by esbuild and loaded with
 * `node -r probe.cjs kubelab-agent.cjs …`, so that nothing else, tsx least of all, sits in the
 * measured process). Configuration comes as JSON in KUBELAB_BENCH_PROBE:
 *
 *   - `setFlags`: V8 flags set with v8.setFlagsFromString before the agent's code loads (what
 *     a product change at the top of the agent's entry would do; the single executable takes no
 *     node flags);
 *   - `out`: on SIGUSR2 the probe writes where memory goes to this file (JSON): the process's
 *     memory before and after full collections, V8's heap spaces and code statistics, resident
 *     memory by mapping, the modules of an instrumented bundle that were evaluated, and (with
 *     `snapshot`) a heap snapshot's size and contents by node type. Take it last: the snapshot
 *     itself grows the process.
 *
 * The bench imports only its types.
 */
import { renameSync, writeFileSync } from 'node:fs';
import {
  getHeapCodeStatistics,
  getHeapSnapshot,
  getHeapSpaceStatistics,
  getHeapStatistics,
  setFlagsFromString,
} from 'node:v8';
import { runInNewContext } from 'node:vm';
import { memoryOf, residentByMapping, type MemoryReading } from './proc.js';

export interface ProbeConfig {
  setFlags?: string[];
  out?: string;
  snapshot?: boolean;
}

export interface MemoryUsage {
  rss: number;
  heapTotal: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
}

export interface SnapshotSummary {
  bytes: number;
  nodes: number;
  /** self_size summed by node type (object, code, string, closure, hidden, array, …), bytes. */
  byType: Record<string, number>;
  /** The biggest (type, name) groups by self size. */
  top: Array<{ type: string; name: string; count: number; bytes: number }>;
}

export interface ProbeResult {
  uptimeSeconds: number;
  before: MemoryUsage;
  afterGc: MemoryUsage;
  status: MemoryReading;
  mappings: Record<string, number>;
  spaces: Array<{ name: string; size: number; used: number; physical: number }>;
  heap: {
    totalHeapSize: number;
    totalPhysicalSize: number;
    usedHeapSize: number;
    heapSizeLimit: number;
    mallocedMemory: number;
    peakMallocedMemory: number;
    externalMemory: number;
    nativeContexts: number;
  };
  code: { codeAndMetadata: number; bytecodeAndMetadata: number; externalScriptSource: number };
  builtinModules: number;
  /** Module paths of an instrumented bundle whose CommonJS wrapper ran (see agent-build.ts). */
  modules?: string[];
  snapshot?: SnapshotSummary;
  flagsSet?: string[];
}

const config = JSON.parse(process.env.KUBELAB_BENCH_PROBE ?? '{}') as ProbeConfig;
// Not inherited by anything the agent starts.
delete process.env.KUBELAB_BENCH_PROBE;

for (const flag of config.setFlags ?? []) setFlagsFromString(flag);

function gc(): void {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (typeof exposed === 'function') return exposed();
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

function usage(): MemoryUsage {
  const m = process.memoryUsage();
  return {
    rss: m.rss,
    heapTotal: m.heapTotal,
    heapUsed: m.heapUsed,
    external: m.external,
    arrayBuffers: m.arrayBuffers,
  };
}

async function summarizeSnapshot(): Promise<SnapshotSummary> {
  const chunks: string[] = [];
  let bytes = 0;
  for await (const chunk of getHeapSnapshot()) {
    const s = typeof chunk === 'string' ? chunk : (chunk as Buffer).toString('utf8');
    bytes += Buffer.byteLength(s);
    chunks.push(s);
  }
  const snap = JSON.parse(chunks.join('')) as {
    snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] }; node_count: number };
    nodes: number[];
    strings: string[];
  };
  chunks.length = 0;
  const fields = snap.snapshot.meta.node_fields;
  const width = fields.length;
  const typeIdx = fields.indexOf('type');
  const nameIdx = fields.indexOf('name');
  const sizeIdx = fields.indexOf('self_size');
  const types = snap.snapshot.meta.node_types[0];
  const byType: Record<string, number> = {};
  const groups = new Map<string, { type: string; name: string; count: number; bytes: number }>();
  for (let i = 0; i < snap.nodes.length; i += width) {
    const type = types[snap.nodes[i + typeIdx]] ?? 'unknown';
    const size = snap.nodes[i + sizeIdx];
    byType[type] = (byType[type] ?? 0) + size;
    // Strings and code are grouped by type only (their names are their contents).
    const rawName =
      type === 'string' || type === 'concatenated string' || type === 'sliced string'
        ? ''
        : (snap.strings[snap.nodes[i + nameIdx]] ?? '');
    const name = rawName.length > 60 ? `${rawName.slice(0, 57)}…` : rawName;
    const key = `${type}\0${name}`;
    const g = groups.get(key) ?? { type, name, count: 0, bytes: 0 };
    g.count++;
    g.bytes += size;
    groups.set(key, g);
  }
  const top = [...groups.values()].sort((a, b) => b.bytes - a.bytes).slice(0, 15);
  return { bytes, nodes: snap.nodes.length / width, byType, top };
}

async function measure(out: string): Promise<void> {
  const before = usage();
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((r) => setTimeout(r, 50));
  }
  gc();
  const afterGc = usage();
  const h = getHeapStatistics();
  const c = getHeapCodeStatistics();
  const loaded = (globalThis as { __kubelabBenchModules?: Set<string> }).__kubelabBenchModules;
  const result: ProbeResult = {
    uptimeSeconds: process.uptime(),
    before,
    afterGc,
    status: memoryOf(process.pid),
    mappings: residentByMapping('self'),
    spaces: getHeapSpaceStatistics().map((s) => ({
      name: s.space_name,
      size: s.space_size,
      used: s.space_used_size,
      physical: s.physical_space_size,
    })),
    heap: {
      totalHeapSize: h.total_heap_size,
      totalPhysicalSize: h.total_physical_size,
      usedHeapSize: h.used_heap_size,
      heapSizeLimit: h.heap_size_limit,
      mallocedMemory: h.malloced_memory,
      peakMallocedMemory: h.peak_malloced_memory,
      externalMemory: h.external_memory,
      nativeContexts: h.number_of_native_contexts,
    },
    code: {
      codeAndMetadata: c.code_and_metadata_size,
      bytecodeAndMetadata: c.bytecode_and_metadata_size,
      externalScriptSource: c.external_script_source_size,
    },
    builtinModules: (process as unknown as { moduleLoadList: string[] }).moduleLoadList.filter((m) =>
      m.startsWith('NativeModule'),
    ).length,
    ...(loaded ? { modules: [...loaded].sort() } : {}),
    ...(config.setFlags?.length ? { flagsSet: config.setFlags } : {}),
  };
  if (config.snapshot) result.snapshot = await summarizeSnapshot();
  writeFileSync(`${out}.tmp`, JSON.stringify(result));
  renameSync(`${out}.tmp`, out);
}

if (config.out) {
  const out = config.out;
  let busy = false;
  process.on('SIGUSR2', () => {
    if (busy) return;
    busy = true;
    measure(out).then(
      () => (busy = false),
      (err: Error) => {
        writeFileSync(out, JSON.stringify({ error: err.message }));
        busy = false;
      },
    );
  });
}

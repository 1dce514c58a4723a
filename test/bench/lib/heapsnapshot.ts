/**
 * Reading a V8 heap snapshot (the inspector's HeapProfiler JSON): bytes per constructor, and
 * what each part of the program keeps alive — its retained size, from the dominator tree (an
 * object dominates another when every path from the roots to the other passes through it, so
 * what a cache dominates is what freeing the cache would free).
 */

export interface HeapSnapshot {
  snapshot: {
    meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] };
  };
  nodes: number[];
  edges: number[];
  strings: string[];
}

/** Bytes and counts per constructor (objects, closures) or per type (strings, arrays, code…). */
export function byConstructor(snap: HeapSnapshot): {
  total: number;
  count: number;
  rows: Map<string, [number, number]>;
} {
  const g = graph(snap);
  const rows = new Map<string, [number, number]>();
  let total = 0;
  for (let n = 0; n < g.count; n++) {
    const key = g.label(n);
    const size = g.selfSize[n];
    total += size;
    const row = rows.get(key) ?? [0, 0];
    row[0] += size;
    row[1]++;
    rows.set(key, row);
  }
  return { total, count: g.count, rows };
}

interface Graph {
  count: number;
  selfSize: Int32Array;
  /** The first of node n's edges is firstEdge[n], the last firstEdge[n + 1] - 1. */
  firstEdge: Int32Array;
  edgeTo: Int32Array;
  /** Weak edges do not keep their target alive. */
  edgeWeak: Uint8Array;
  edgeName(e: number): string;
  type(n: number): string;
  name(n: number): string;
  /** "Constructor (object)", "Name (closure)" or "(type)". */
  label(n: number): string;
}

function graph(snap: HeapSnapshot): Graph {
  const nf = snap.snapshot.meta.node_fields;
  const ef = snap.snapshot.meta.edge_fields;
  const nodeTypes = snap.snapshot.meta.node_types[0];
  const edgeTypes = snap.snapshot.meta.edge_types[0];
  const width = nf.length;
  const ewidth = ef.length;
  const count = snap.nodes.length / width;
  const selfSize = new Int32Array(count);
  const firstEdge = new Int32Array(count + 1);
  const edgeCount = snap.edges.length / ewidth;
  const edgeTo = new Int32Array(edgeCount);
  const edgeWeak = new Uint8Array(edgeCount);
  const [typeAt, nameAt, sizeAt, edgesAt] = ['type', 'name', 'self_size', 'edge_count'].map((f) =>
    nf.indexOf(f),
  );
  const [eTypeAt, eNameAt, eToAt] = ['type', 'name_or_index', 'to_node'].map((f) => ef.indexOf(f));
  let e = 0;
  for (let n = 0; n < count; n++) {
    selfSize[n] = snap.nodes[n * width + sizeAt];
    firstEdge[n] = e;
    e += snap.nodes[n * width + edgesAt];
  }
  firstEdge[count] = e;
  for (let i = 0; i < edgeCount; i++) {
    edgeTo[i] = snap.edges[i * ewidth + eToAt] / width;
    edgeWeak[i] = edgeTypes[snap.edges[i * ewidth + eTypeAt]] === 'weak' ? 1 : 0;
  }
  const type = (n: number) => nodeTypes[snap.nodes[n * width + typeAt]];
  const name = (n: number) => snap.strings[snap.nodes[n * width + nameAt]];
  return {
    count,
    selfSize,
    firstEdge,
    edgeTo,
    edgeWeak,
    edgeName: (i) => {
      const t = edgeTypes[snap.edges[i * ewidth + eTypeAt]];
      const v = snap.edges[i * ewidth + eNameAt];
      return t === 'element' || t === 'hidden' ? String(v) : snap.strings[v];
    },
    type,
    name,
    label: (n) => {
      const t = type(n);
      return t === 'object' || t === 'closure' ? `${name(n)} (${t})` : `(${t})`;
    },
  };
}

/**
 * Each node's retained size: its own bytes and those of every node it dominates (Cooper,
 * Harvey and Kennedy's iterative algorithm over a reverse postorder from the root, node 0).
 */
function retainedSizes(g: Graph): { retained: Float64Array; idom: Int32Array } {
  const { count, firstEdge, edgeTo, edgeWeak } = g;
  const order = new Int32Array(count).fill(-1); // postorder number
  const byOrder = new Int32Array(count);
  let reached = 0;
  // Iterative depth-first search.
  const stack = new Int32Array(count);
  const next = new Int32Array(count);
  const seen = new Uint8Array(count);
  let sp = 0;
  stack[sp++] = 0;
  seen[0] = 1;
  next[0] = firstEdge[0];
  while (sp > 0) {
    const n = stack[sp - 1];
    if (next[n] < firstEdge[n + 1]) {
      const e = next[n]++;
      const to = edgeTo[e];
      if (edgeWeak[e] || seen[to]) continue;
      seen[to] = 1;
      next[to] = firstEdge[to];
      stack[sp++] = to;
    } else {
      sp--;
      order[n] = reached;
      byOrder[reached++] = n;
    }
  }
  // Predecessors of the reached nodes.
  const predCount = new Int32Array(count + 1);
  for (let n = 0; n < count; n++) {
    if (order[n] < 0) continue;
    for (let e = firstEdge[n]; e < firstEdge[n + 1]; e++) if (!edgeWeak[e]) predCount[edgeTo[e] + 1]++;
  }
  for (let n = 0; n < count; n++) predCount[n + 1] += predCount[n];
  const preds = new Int32Array(predCount[count]);
  const fill = predCount.slice(0, count);
  for (let n = 0; n < count; n++) {
    if (order[n] < 0) continue;
    for (let e = firstEdge[n]; e < firstEdge[n + 1]; e++) if (!edgeWeak[e]) preds[fill[edgeTo[e]]++] = n;
  }
  const idom = new Int32Array(count).fill(-1);
  idom[0] = 0;
  const intersect = (a: number, b: number) => {
    while (a !== b) {
      while (order[a] < order[b]) a = idom[a];
      while (order[b] < order[a]) b = idom[b];
    }
    return a;
  };
  for (let changed = true; changed;) {
    changed = false;
    for (let i = reached - 2; i >= 0; i--) {
      const n = byOrder[i];
      let dom = -1;
      for (let p = predCount[n]; p < predCount[n + 1]; p++) {
        const pred = preds[p];
        if (order[pred] < 0 || idom[pred] < 0) continue;
        dom = dom < 0 ? pred : intersect(pred, dom);
      }
      if (dom >= 0 && idom[n] !== dom) {
        idom[n] = dom;
        changed = true;
      }
    }
  }
  const retained = new Float64Array(count);
  for (let i = 0; i < reached; i++) {
    const n = byOrder[i];
    retained[n] += g.selfSize[n];
    if (n !== 0 && idom[n] >= 0) retained[idom[n]] += retained[n];
  }
  return { retained, idom };
}

export interface Holder {
  /** e.g. "WatchCache pods" or "NodeMetricsHistory". */
  what: string;
  instances: number;
  retained: number;
  /** Retained through each named field of the instances (e.g. a cache's objects and history). */
  fields: Map<string, number>;
}

/** Where an instance's name for the report is found: WatchCache.info.plural, and so on. */
const NAMED_BY: Record<string, string[]> = {
  WatchCache: ['info', 'plural'],
  SharedIndexInformer: ['options', 'kind'],
};

/**
 * What the instances of `constructors` keep alive, summed per constructor (and per kind, where
 * NAMED_BY says where an instance keeps it), with what each of their fields alone keeps alive.
 */
export function holders(snap: HeapSnapshot, constructors: readonly string[]): Holder[] {
  const g = graph(snap);
  const { retained, idom } = retainedSizes(g);
  const wanted = new Set(constructors);
  const out = new Map<string, Holder>();
  const field = (n: number, name: string) => {
    for (let e = g.firstEdge[n]; e < g.firstEdge[n + 1]; e++) if (g.edgeName(e) === name) return g.edgeTo[e];
    return -1;
  };
  for (let n = 0; n < g.count; n++) {
    if (g.type(n) !== 'object' || !wanted.has(g.name(n))) continue;
    let what = g.name(n);
    let at = n;
    for (const step of NAMED_BY[what] ?? []) at = at >= 0 ? field(at, step) : -1;
    if (at >= 0 && at !== n && g.type(at) === 'string') what += ` ${g.name(at)}`;
    const h = out.get(what) ?? { what, instances: 0, retained: 0, fields: new Map<string, number>() };
    h.instances++;
    h.retained += retained[n];
    for (let e = g.firstEdge[n]; e < g.firstEdge[n + 1]; e++) {
      const to = g.edgeTo[e];
      // Only what this instance alone keeps alive is its field's.
      if (g.edgeWeak[e] || idom[to] !== n) continue;
      const name = g.edgeName(e);
      h.fields.set(name, (h.fields.get(name) ?? 0) + retained[to]);
    }
    out.set(what, h);
  }
  return [...out.values()].sort((a, b) => b.retained - a.retained);
}

/**
 * The last 15 minutes of each node's NodeMetrics, for the GUI's charts (`nodeMetricsHistory`).
 *
 * A fleet reports every 10 s, so 5,000 nodes make 450,000 samples in 15 minutes. Kept as the
 * store's versions, each one was a whole object (~500 bytes of JSON) in an in-memory SQLite
 * table at ~790 bytes of memory a row: ~360 MiB. Here a sample is one short string — its
 * resourceVersion, timestamp and usage values as sent, joined — and what samples share (the
 * window, the usage names, the object's metadata) is kept once: ~160 bytes of heap a sample
 * (measured at 5,000 nodes × 90 samples).
 *
 * It follows the NodeMetrics watch cache as any watcher does, so every write is recorded
 * whoever made it, and a deleted NodeMetrics takes its history with it.
 */
import type { KubeObject, NodeMetrics, ObjectMeta } from '../../client/api/types.js';
import type { Clock } from '../../client/util/clock.js';
import type { CachedObject, CacheWatcher, WatchCache } from './watchcache.js';

export const METRICS_HISTORY_MS = 15 * 60_000;
/** Separates a sample's parts: no resourceVersion, timestamp or quantity can hold it. */
const SEP = '|';
/**
 * Forms remembered to be shared; past this many (a node inventing usage names every report),
 * a new form is kept with its samples only, and goes when they do.
 */
const MAX_SHAPES = 1024;

/** What the samples of a node have in common while its agent's report keeps its form. */
interface Shape {
  window: string | undefined;
  names: string[];
}

interface Series {
  /** The object's metadata but its resourceVersion, as last written. */
  metadata: ObjectMeta;
  apiVersion: string | undefined;
  /** Oldest first: when each sample was recorded (ms), its shape, and its packed parts. */
  at: number[];
  shapes: Shape[];
  packed: string[];
}

export class NodeMetricsHistory {
  private readonly series = new Map<string, Series>();
  private readonly shapes = new Map<string, Shape>();
  private watcher: CacheWatcher | undefined;
  private following = false;

  constructor(
    private readonly clock: Clock,
    private readonly retentionMs = METRICS_HISTORY_MS,
  ) {}

  /**
   * Records every NodeMetrics the cache holds now and every write after. A watch cache rebuilt
   * from the store ends its watchers; the history then follows it again from its new state,
   * dropping the nodes whose NodeMetrics went meanwhile.
   */
  follow(cache: WatchCache): void {
    this.following = true;
    const present = new Set<string>();
    let initial = true;
    this.watcher = cache.watch(
      { initialEvents: true, bookmarks: false },
      {},
      {
        event: (type, entry) => {
          const name = nameOf(entry);
          if (initial) present.add(name);
          if (type === 'DELETED') this.series.delete(name);
          else this.record(entry);
          return true;
        },
        bookmark: () => undefined,
        end: () => {
          if (this.following) setImmediate(() => this.following && this.follow(cache));
        },
      },
    );
    // The cache's initial events came in the call above.
    initial = false;
    for (const name of this.series.keys()) if (!present.has(name)) this.series.delete(name);
  }

  stop(): void {
    this.following = false;
    this.watcher?.stop();
    this.watcher = undefined;
  }

  /** A node's samples, oldest first, each a NodeMetrics as it was written (undefined: none). */
  samples(name: string): KubeObject[] | undefined {
    const s = this.series.get(name);
    if (!s) return undefined;
    this.prune(s);
    return s.packed.map((packed, i) => {
      const shape = s.shapes[i];
      const [rv, timestamp, ...values] = packed.split(SEP);
      const usage: Record<string, string> = {};
      shape.names.forEach((n, j) => (usage[n] = values[j]));
      const m: NodeMetrics = {
        ...(s.apiVersion !== undefined ? { apiVersion: s.apiVersion } : {}),
        kind: 'NodeMetrics',
        metadata: { ...s.metadata, resourceVersion: rv },
        ...(timestamp ? { timestamp } : {}),
        ...(shape.window !== undefined ? { window: shape.window } : {}),
        usage,
      };
      return m as KubeObject;
    });
  }

  private record(entry: CachedObject): void {
    const m = entry.object as NodeMetrics;
    const name = nameOf(entry);
    const { resourceVersion: _rv, ...metadata } = m.metadata ?? {};
    let s = this.series.get(name);
    if (!s || s.metadata.uid !== metadata.uid) {
      s = { metadata, apiVersion: m.apiVersion, at: [], shapes: [], packed: [] };
      this.series.set(name, s);
    } else {
      s.metadata = metadata;
      s.apiVersion = m.apiVersion;
    }
    // Following a rebuilt cache again replays the version last recorded.
    if (s.packed.at(-1)?.startsWith(`${entry.rv}${SEP}`)) return;
    const usage = m.usage ?? {};
    const names = Object.keys(usage);
    s.at.push(this.clock.now());
    // Most reports have the form of the one before: no key to build for them.
    const last = s.shapes.at(-1);
    const same = last && last.window === m.window && sameNames(last.names, names);
    s.shapes.push(same ? last : this.shape(m.window, names));
    s.packed.push([String(entry.rv), m.timestamp ?? '', ...names.map((n) => usage[n])].join(SEP));
    this.prune(s);
  }

  /** One Shape object for all samples of the same form, across nodes. */
  private shape(window: string | undefined, names: string[]): Shape {
    const key = JSON.stringify([window ?? null, names]);
    const known = this.shapes.get(key);
    if (known) return known;
    const shape = { window, names };
    if (this.shapes.size < MAX_SHAPES) this.shapes.set(key, shape);
    return shape;
  }

  private prune(s: Series): void {
    const cutoff = this.clock.now() - this.retentionMs;
    let drop = 0;
    while (drop < s.at.length && s.at[drop] < cutoff) drop++;
    if (!drop) return;
    s.at.splice(0, drop);
    s.shapes.splice(0, drop);
    s.packed.splice(0, drop);
  }
}

function sameNames(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((n, i) => n === b[i]);
}

function nameOf(entry: CachedObject): string {
  return entry.object.metadata?.name ?? '';
}

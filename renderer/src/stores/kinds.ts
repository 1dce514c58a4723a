/**
 * Pinia stores over informers, one per kind the GUI shows. The objects stay in the informer's
 * plain Map — never made reactive, which for 50,000 pods would cost a proxy per nested object
 * and a deep walk per change. What is reactive is `version`, bumped once per batch of changes
 * (a burst of events makes one batch per frame); views that read `items` or `get()` depend on
 * it. Large views do not copy and re-sort everything per batch: they subscribe with `onBatch`
 * and apply just the changes (table/sortedrows.ts).
 */
import { defineStore } from 'pinia';
import { computed, ref } from 'vue';
import type {
  ConfigMap,
  CronJob,
  DaemonSet,
  Deployment,
  Event,
  Job,
  Lease,
  Node,
  Pod,
} from '../../../client/api/types.js';
import type { BridgeClient } from '../bridge/client.js';
import {
  Informer,
  type Change,
  type InformerOptions,
  type InformerStatus,
  type ObjectLike,
} from './informer.js';
import { secretSummary, type SecretSummary } from '../secret/summary.js';
import { SecondaryIndex } from './secondaryindex.js';

/** At most one batch per frame: a burst of 1,000 events re-renders once, 16 ms later at most. */
const BATCH_MS = 16;

export type BatchListener<T> = (changes: readonly Change<T>[]) => void;

interface KindStoreOptions<T> {
  /** A secondary index (pods by node), read with `indexed`. */
  indexBy?: (object: T) => string | undefined;
  /** How long changes gather before the views hear of them (default: one frame). */
  batchMs?: number;
  /** What the store holds of each object received (default: all of it). */
  keep?: (received: ObjectLike) => T;
}

function defineKindStore<T extends ObjectLike>(
  kind: string,
  { indexBy, batchMs = BATCH_MS, keep }: KindStoreOptions<T> = {},
) {
  return defineStore(`kind:${kind}`, () => {
    const version = ref(0);
    const status = ref<InformerStatus>('connecting');
    const error = ref<string>();
    const synced = ref(false);
    const listeners = new Set<BatchListener<T>>();
    const index = indexBy ? new SecondaryIndex<T>(indexBy) : undefined;
    let informer: Informer<T> | undefined;
    let pending: Change<T>[] = [];
    let flushTimer: ReturnType<typeof setTimeout> | undefined;

    function flush(): void {
      flushTimer = undefined;
      const batch = pending;
      pending = [];
      synced.value = informer?.synced ?? false;
      version.value++;
      for (const l of listeners) l(batch);
    }

    function start(bridge: BridgeClient, options: InformerOptions = {}): void {
      stop();
      const inf = new Informer<T>(bridge, kind, options, keep);
      informer = inf;
      inf.onChange((changes) => {
        if (informer !== inf) return;
        index?.apply(changes);
        for (const c of changes) pending.push(c);
        flushTimer ??= setTimeout(flush, batchMs);
      });
      inf.onStatus(() => {
        status.value = inf.status;
        error.value = inf.lastError;
        // An empty first list changes nothing, and is still the news that the store is synced.
        synced.value = inf.synced;
      });
      inf.start();
    }

    function stop(): void {
      informer?.stop();
      informer = undefined;
      if (flushTimer) clearTimeout(flushTimer);
      flushTimer = undefined;
      pending = [];
      index?.clear();
    }

    /** Every object, as a new array; recomputed only when read after a change. */
    const items = computed<T[]>(() => {
      void version.value;
      return informer ? informer.list() : [];
    });

    const size = computed(() => {
      void version.value;
      return informer?.items.size ?? 0;
    });

    /** The object with this key (namespace/name, or name): reactive through `version`. */
    function get(key: string): T | undefined {
      void version.value;
      return informer?.items.get(key);
    }

    /** Every object without copying (not reactive: for consumers that follow `onBatch`). */
    function values(): Iterable<T> {
      return informer?.items.values() ?? [];
    }

    /** The objects whose index value is `value` (pods: on that node); reactive through `version`. */
    function indexed(value: string): T[] {
      void version.value;
      return index ? index.get(value) : [];
    }

    /** Each batch of changes, after the store holds it. */
    function onBatch(listener: BatchListener<T>): () => void {
      listeners.add(listener);
      return () => listeners.delete(listener);
    }

    return { version, items, size, status, error, synced, start, stop, get, values, indexed, onBatch };
  });
}

export const useNodes = defineKindStore<Node>('Node');
export const usePods = defineKindStore<Pod>('Pod', { indexBy: (pod) => pod.spec?.nodeName || undefined });
/**
 * The nodes' heartbeat leases (App.vue starts it on NODE_LEASE_NAMESPACE only). Every node
 * renews its lease every 10 s — 500 events a second at 5,000 nodes — and a heartbeat is shown
 * to the second, so their changes reach the views once a second rather than every frame.
 */
export const useNodeLeases = defineKindStore<Lease>('Lease', { batchMs: 1_000 });
export const useDaemonSets = defineKindStore<DaemonSet>('DaemonSet');
export const useDeployments = defineKindStore<Deployment>('Deployment');
/** Jobs, indexed by their controller's uid: a CronJob's history is `indexed(cronJob.metadata.uid)`. */
export const useJobs = defineKindStore<Job>('Job', {
  indexBy: (job) => job.metadata?.ownerReferences?.find((o) => o.controller)?.uid,
});
export const useCronJobs = defineKindStore<CronJob>('CronJob');
export const useConfigMaps = defineKindStore<ConfigMap>('ConfigMap');
/** Secrets without their values: a Secret's page fetches one value when the user reveals it. */
export const useSecrets = defineKindStore<SecretSummary>('Secret', { keep: secretSummary });
export const useEvents = defineKindStore<Event>('Event');

/** The stores the app keeps live from start to end. */
export type KindStore<T extends ObjectLike> = ReturnType<ReturnType<typeof defineKindStore<T>>>;

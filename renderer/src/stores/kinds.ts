/**
 * Pinia stores over informers, one per kind the GUI shows: `items` is replaced (not mutated)
 * on each change so views re-render once per batch, `status` drives the connection banner.
 */
import { defineStore } from 'pinia';
import { ref, shallowRef } from 'vue';
import type { DaemonSet, Event, Node, NodeMetrics, Pod } from '../../../client/api/types.js';
import type { BridgeClient } from '../bridge/client.js';
import { Informer, type InformerOptions, type InformerStatus, type ObjectLike } from './informer.js';

function defineKindStore<T extends ObjectLike>(kind: string) {
  return defineStore(`kind:${kind}`, () => {
    const items = shallowRef<T[]>([]);
    const status = ref<InformerStatus>('connecting');
    const error = ref<string>();
    const synced = ref(false);
    let informer: Informer<T> | undefined;

    function start(bridge: BridgeClient, options: InformerOptions = {}): void {
      informer?.stop();
      const inf = new Informer<T>(bridge, kind, options);
      informer = inf;
      // Many events in a burst make one new array, not one each: copying 50,000 pods per
      // event would be the GUI's bottleneck. One frame (16 ms) of latency at most.
      let pending: ReturnType<typeof setTimeout> | undefined;
      inf.onChange(() => {
        pending ??= setTimeout(() => {
          pending = undefined;
          items.value = inf.list();
          synced.value = inf.synced;
        }, 16);
      });
      inf.onStatus(() => {
        status.value = inf.status;
        error.value = inf.lastError;
      });
      inf.start();
    }

    function stop(): void {
      informer?.stop();
      informer = undefined;
    }

    function get(key: string): T | undefined {
      return informer?.items.get(key);
    }

    return { items, status, error, synced, start, stop, get };
  });
}

export const useNodes = defineKindStore<Node>('Node');
export const usePods = defineKindStore<Pod>('Pod');
export const useDaemonSets = defineKindStore<DaemonSet>('DaemonSet');
export const useEvents = defineKindStore<Event>('Event');
export const useNodeMetrics = defineKindStore<NodeMetrics>('NodeMetrics');

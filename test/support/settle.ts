/**
 * Waiting for a controller run directly by a test: idle, its events written, and its informers
 * holding what the API holds — a sync point for "nothing more happens" checks, without sleeps
 * of a guessed length.
 */
import type { KindName, KubeObject } from '../../client/api/types.js';
import type { SharedInformerFactory } from '../../client/cache/factory.js';
import type { Client } from '../../client/client.js';

export interface Settling {
  /** What the test calls the controller, for the error. */
  name: string;
  idle(): Promise<void>;
  /** Writes recorded events now (an EventRecorder's flush). */
  flush?(): Promise<void>;
  client: Client;
  factory: SharedInformerFactory;
  kinds: readonly KindName[];
}

/** Whether each informer of `kinds` holds exactly the objects, at the versions, the API lists. */
export async function cachesCaughtUp(s: Pick<Settling, 'client' | 'factory' | 'kinds'>): Promise<boolean> {
  for (const kind of s.kinds) {
    const { items } = await s.client.list(kind);
    const informer = s.factory.informerFor(kind);
    if (informer.list().length !== items.length) return false;
    for (const o of items as KubeObject[]) {
      const cached = informer.get(o.metadata!.name!, o.metadata!.namespace);
      if (cached?.metadata?.resourceVersion !== o.metadata!.resourceVersion) return false;
    }
  }
  return true;
}

/** Waits until the controller is idle, its events are written and its caches caught up. */
export async function settleController(s: Settling): Promise<void> {
  for (let round = 0; round < 200; round++) {
    await s.idle();
    await s.flush?.();
    if (await cachesCaughtUp(s)) {
      await s.idle();
      if (await cachesCaughtUp(s)) return;
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`the ${s.name} did not settle`);
}

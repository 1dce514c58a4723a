/**
 * Marking the pods of a node that stopped being Ready as not Ready (MarkPodsNotReady), so
 * that whoever routes traffic to them stops at once, before any eviction.
 */
import { isNotFound } from '../../../client/api/errors.js';
import type { Pod } from '../../../client/api/types.js';
import type { Client } from '../../../client/client.js';
import type { EventRecorder } from '../../../client/events/recorder.js';
import { rfc3339 } from '../../../client/util/clock.js';

/** Pods whose Ready condition would change: the copies to write. */
export function podsToMarkNotReady(pods: Pod[], nodeName: string, now: number): Pod[] {
  const out: Pod[] = [];
  for (const pod of pods) {
    if (pod.spec?.nodeName !== nodeName) continue;
    const conditions = pod.status?.conditions ?? [];
    const i = conditions.findIndex((c) => c.type === 'Ready');
    if (i < 0 || conditions[i].status === 'False') continue;
    const next = [...conditions];
    next[i] = { ...conditions[i], status: 'False', lastTransitionTime: rfc3339(now) };
    out.push({ ...pod, status: { ...pod.status, conditions: next } });
  }
  return out;
}

/** Writes them; the first error stops the pass (the caller retries the node next time). */
export async function markPodsNotReady(
  client: Client,
  recorder: EventRecorder,
  pods: Pod[],
  nodeName: string,
  now: number,
): Promise<void> {
  for (const pod of podsToMarkNotReady(pods, nodeName, now)) {
    try {
      await client.updateStatus<Pod>(pod);
      recorder.event(pod, 'Warning', 'NodeNotReady', 'Node is not ready');
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
}

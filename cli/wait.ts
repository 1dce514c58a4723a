/**
 * Waiting, as a person watches it: until objects are gone (delete, drain) or a condition holds
 * (rollout status), polling on the injected clock, saying what it still waits for, and giving
 * up after --timeout with a message that says what is left.
 */
import { isNotFound } from '../client/api/errors.js';
import type { KindInfo } from '../client/api/kinds.js';
import type { KindName, KubeObject } from '../client/api/types.js';
import type { Client } from '../client/client.js';
import type { Clock } from '../client/util/clock.js';
import { CliError } from './errors.js';
import { sleep } from './io.js';
import { objectRef } from './resources.js';

export interface Doomed {
  info: KindInfo;
  name: string;
  namespace: string;
  /** The incarnation being deleted: one recreated under the same name counts as gone. */
  uid?: string;
}

export interface WaitOptions {
  clock: Clock;
  /** 0: wait as long as it takes. */
  timeoutMs: number;
  pollMs?: number;
  /** Called once per object when it is gone. */
  onGone?(d: Doomed): void;
  /** Called now and then with what is still there. */
  onWaiting?(left: Array<{ d: Doomed; object: KubeObject }>): void;
  /** How often onWaiting is called. */
  progressEveryMs?: number;
}

async function stillThere(client: Client, d: Doomed): Promise<KubeObject | undefined> {
  try {
    const o = await client.get(d.info.kind as KindName, d.name, { namespace: d.namespace });
    return d.uid && o.metadata?.uid !== d.uid ? undefined : o;
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/** What keeps an object: its finalizers and grace period, for progress and timeout messages. */
export function whyStillThere(o: KubeObject): string {
  const meta = o.metadata ?? {};
  const parts: string[] = [];
  if (meta.deletionTimestamp) parts.push('terminating');
  if (meta.finalizers?.length) parts.push(`finalizers: ${meta.finalizers.join(', ')}`);
  return parts.join(', ') || 'not yet deleted';
}

export async function waitForDeletion(client: Client, doomed: Doomed[], opts: WaitOptions): Promise<void> {
  const started = opts.clock.now();
  let left = [...doomed];
  let lastProgress = started;
  const poll = opts.pollMs ?? 250;
  for (;;) {
    const remaining: Array<{ d: Doomed; object: KubeObject }> = [];
    for (const d of left) {
      const object = await stillThere(client, d);
      if (object) remaining.push({ d, object });
      else opts.onGone?.(d);
    }
    left = remaining.map((r) => r.d);
    if (!left.length) return;
    const now = opts.clock.now();
    if (opts.timeoutMs > 0 && now - started >= opts.timeoutMs) {
      const what = remaining
        .map((r) => `${objectRef(r.d.info, r.d.name)} (${whyStillThere(r.object)})`)
        .join(', ');
      throw new CliError(
        `timed out after ${Math.round(opts.timeoutMs / 1000)}s waiting for the deletion of ${what}; raise --timeout to wait longer`,
      );
    }
    if (now - lastProgress >= (opts.progressEveryMs ?? 5000)) {
      lastProgress = now;
      opts.onWaiting?.(remaining);
    }
    await sleep(opts.clock, poll);
  }
}

/** Polls `check` until it returns true, or fails after the timeout with `what`. */
export async function waitUntil(
  clock: Clock,
  check: () => Promise<boolean>,
  timeoutMs: number,
  what: string,
  pollMs = 250,
): Promise<void> {
  const started = clock.now();
  for (;;) {
    if (await check()) return;
    if (timeoutMs > 0 && clock.now() - started >= timeoutMs) {
      throw new CliError(
        `timed out after ${Math.round(timeoutMs / 1000)}s waiting for ${what}; raise --timeout to wait longer`,
      );
    }
    await sleep(clock, pollMs);
  }
}

/**
 * The first join, as the kubelet's TLS bootstrap does it: a control plane that is not there
 * yet (not started, rebooting, a network not up) is waited for, with back-off, however long
 * it takes — a machine set up before its control plane joins when the control plane comes.
 * It says once that it waits, for what, and what to check. A control plane that answers and
 * refuses (a wrong or expired token, a CA that does not match the token) ends it at once:
 * waiting would not change the answer.
 */
import { joinCluster, type JoinOptions, type JoinResult } from '../client/grpc/cluster.js';
import { Backoff } from '../client/util/backoff.js';
import { realClock, type Clock } from '../client/util/clock.js';
import { Sleeper } from '../client/util/sleeper.js';
import { isUnreachable } from './contact.js';

export interface JoinWhenReachableOptions extends JoinOptions {
  /** The control plane's replicas: each is tried in turn. */
  servers: string[];
  joinToken: string;
  nodeName: string;
  clock?: Clock;
  /** Told once, when the first round of tries found no replica answering. */
  onWaiting?: (message: string) => void;
}

/** Between rounds of tries: 1 s, doubling, up to 15 s (a little jitter, so a fleet spreads out). */
const JOIN_BACKOFF = { initialMs: 1_000, maxMs: 15_000, jitter: 0.2 };

export async function joinWhenReachable(options: JoinWhenReachableOptions): Promise<JoinResult> {
  const { servers, joinToken, nodeName } = options;
  const clock = options.clock ?? realClock;
  const backoff = new Backoff(JOIN_BACKOFF, clock);
  const sleeper = new Sleeper(clock);
  let toldWaiting = false;
  for (;;) {
    let last: unknown;
    for (const server of servers) {
      try {
        return await joinCluster(server, joinToken, nodeName, {
          nodePassword: options.nodePassword,
          force: options.force,
        });
      } catch (err) {
        // A refused token or a wrong CA will not get better on another replica, or later.
        if (!isUnreachable(err)) throw err;
        last = err;
      }
    }
    if (!toldWaiting) {
      toldWaiting = true;
      options.onWaiting?.(
        `waiting for the control plane at ${servers.join(', ')} (${(last as Error).message}); trying again with back-off until it answers — check that \`kubelab server\` runs there and that --server names its address and port`,
      );
    }
    await sleeper.sleep(backoff.next());
  }
}

/**
 * Hollow fleets for the benchmarks: nodes joined ahead, a few at a time, into the data folders
 * `kubelab-agent --hollow N --data-dir D` reads its credentials from (obtainCredentials, the
 * way the agent joins), so that the agents then start from stored credentials at once instead
 * of joining their nodes one after another (~0.3–0.6 s each on a 2-core machine).
 */
import { credentialsPath, nodePasswordPath, obtainCredentials } from '../../../agent/credentials.js';
import { log } from './run.js';
import { fmt } from './stats.js';
import { throughput } from './workloads.js';

export interface FleetNode {
  /** The agent process's --data-dir. */
  dataDir: string;
  node: string;
}

/** Joins every node with `joinToken`, `concurrency` at a time, logging progress every 10 s. */
export async function joinAhead(
  server: string,
  joinToken: string,
  nodes: FleetNode[],
  concurrency: number,
): Promise<{ seconds: number; perSec: number }> {
  log(`joining ${fmt(nodes.length, 0)} hollow nodes, ${concurrency} at a time`);
  let joined = 0;
  const ticker = setInterval(() => log(`joined ${fmt(joined, 0)}/${fmt(nodes.length, 0)}`), 10_000);
  try {
    const j = await throughput(nodes.length, concurrency, async (i) => {
      await obtainCredentials({
        path: credentialsPath(nodes[i].dataDir, nodes[i].node),
        passwordPath: nodePasswordPath(nodes[i].dataDir, nodes[i].node),
        servers: [server],
        joinToken,
        nodeName: nodes[i].node,
      });
      joined++;
    });
    log(`joined ${fmt(nodes.length, 0)} nodes in ${fmt(j.seconds, 1)} s (${fmt(j.perSec, 0)}/s)`);
    return { seconds: j.seconds, perSec: j.perSec };
  } finally {
    clearInterval(ticker);
  }
}

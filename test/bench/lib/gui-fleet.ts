/**
 * The hollow fleet behind bench:gui: nodes joined ahead (lib/fleet.ts), then run by a few
 * `kubelab-agent --hollow N` child processes at the agent's defaults (they heartbeat, post
 * status and run the pods bound to them with the hollow runtime), and a wait until every node
 * is Ready, with progress lines. Nodes are named <prefix>-<i>, prefixes gui-a, gui-b, …
 */
import { join } from 'node:path';
import type { Node } from '../../../client/api/types.js';
import { SharedInformerFactory } from '../../../client/cache/factory.js';
import { TokensClient } from '../../../client/grpc/cluster.js';
import { AGENT_BIN } from '../../support/agentproc.js';
import type { ChildControlPlane } from './child.js';
import { checkAlive, startProc, type Proc } from './childproc.js';
import { joinAhead } from './fleet.js';
import type { ServerHealth } from './gui-health.js';
import type { Cleanup } from './run.js';
import { log } from './run.js';
import { fmt, nowMs, sleep } from './stats.js';

export interface HollowGroup {
  /** The process's name in reports and its --hollow-prefix. */
  prefix: string;
  count: number;
  dataDir: string;
}

export interface Fleet {
  groups: HollowGroup[];
  procs: Proc[];
  /** Every node's name, in creation order (group by group). */
  nodeNames: string[];
  joinSeconds: number;
  /** Agents spawned → every node Ready and every process said it runs every node, s. */
  readySeconds: number;
}

function isReady(n: Node): boolean {
  return n.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
}

/** Splits `nodes` over `processes` groups as evenly as possible. */
export function hollowGroups(nodes: number, processes: number, dir: string): HollowGroup[] {
  return Array.from({ length: processes }, (_, i) => {
    const prefix = `gui-${String.fromCharCode(97 + i)}`;
    return {
      prefix,
      count: Math.floor(nodes / processes) + (i < nodes % processes ? 1 : 0),
      dataDir: join(dir, prefix),
    };
  }).filter((g) => g.count > 0);
}

/**
 * Joins every node ahead (so the agents start from stored credentials at once instead of one
 * join after another), starts one agent process per group and waits until every node is Ready.
 * The processes are stopped by `cleanup`.
 */
export async function startFleet(
  cp: ChildControlPlane,
  groups: HollowGroup[],
  joinConcurrency: number,
  cleanup: Cleanup,
  health: ServerHealth,
): Promise<Fleet> {
  const server = `https://${cp.server}`;
  const tokens = new TokensClient({ server, token: cp.token, caPem: cp.caPem });
  const joinToken = (await tokens.create({ description: 'bench:gui' }).finally(() => tokens.close())).token!;
  const nodeNames = groups.flatMap((g) => Array.from({ length: g.count }, (_, i) => `${g.prefix}-${i}`));
  const joined = await joinAhead(
    server,
    joinToken,
    groups.flatMap((g) =>
      Array.from({ length: g.count }, (_, i) => ({ dataDir: g.dataDir, node: `${g.prefix}-${i}` })),
    ),
    joinConcurrency,
  );

  // Ready is read from a Node informer of this process (a connection of its own), dropped once
  // every node is Ready so that it does not compete with the GUI for the cores afterwards.
  const factory = new SharedInformerFactory(cp.client(true));
  const nodeInformer = factory.informerFor('Node');
  cleanup.add('node informer', () => factory.shutdown());
  factory.start();
  if (!(await factory.waitForCacheSync(60_000)))
    throw new Error('the Node informer did not sync within 60 s');

  const t0 = nowMs();
  const procs: Proc[] = [];
  for (const g of groups) {
    const p = startProc(
      g.prefix,
      [
        AGENT_BIN,
        '--hollow',
        String(g.count),
        '--hollow-prefix',
        g.prefix,
        '--server',
        server,
        '--data-dir',
        g.dataDir,
        '--log-level',
        'warn',
      ],
      /running/,
    );
    procs.push(p);
    cleanup.add(g.prefix, () => p.stop());
  }
  const total = nodeNames.length;
  log(
    `started ${groups.map((g) => `kubelab-agent --hollow ${g.count} (${g.prefix})`).join(', ')}; waiting for every node to be Ready`,
  );
  // Each process starts its nodes spread over 10 s, and a loaded 2-core machine is slow: allow for it.
  const timeoutMs = 5 * 60_000 + total * 100;
  let lastLog = nowMs();
  for (;;) {
    checkAlive(procs);
    const all = nodeInformer.list();
    const ready = all.filter(isReady).length;
    if (ready >= total && procs.every((p) => p.upAt !== undefined)) break;
    if (nowMs() - t0 > timeoutMs)
      throw new Error(
        `only ${ready}/${total} nodes were Ready ${fmt(timeoutMs / 1000, 0)} s after the agents started ` +
          `(${all.length} registered): the server or the agents did not keep up`,
      );
    if (nowMs() - lastLog >= 10_000) {
      lastLog = nowMs();
      log(
        `${fmt((nowMs() - t0) / 1000, 0)} s: ${fmt(all.length, 0)} nodes registered, ${fmt(ready, 0)}/${fmt(total, 0)} Ready; ` +
          `${procs.filter((p) => p.upAt !== undefined).length}/${procs.length} agent processes run all their nodes; ` +
          (await health.line()),
      );
    }
    await sleep(500);
  }
  const readySeconds = (nowMs() - t0) / 1000;
  await cleanup.now('node informer');
  log(`every node Ready ${fmt(readySeconds, 1)} s after the agents started`);
  return { groups, procs, nodeNames, joinSeconds: joined.seconds, readySeconds };
}

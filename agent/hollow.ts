/**
 * Hollow mode: many simulated nodes in one process, each a full NodeAgent (same code paths)
 * with a HollowMachineReader instead of the real machine and the hollow pod runtime (pods
 * "run" without processes), sharing one connection. Tests and benchmarks steer each node's
 * readings and script their containers' exits through env (runtime/hollow.ts).
 */
import { join } from 'node:path';
import type { Client } from '../client/client.js';
import { failoverClient } from '../client/grpc/transport.js';
import { realClock, type Clock } from '../client/util/clock.js';
import { NodeAgent } from './agent.js';
import { ControlPlaneContact } from './contact.js';
import type { AgentConfig } from './config.js';
import { credentialsPath, nodePasswordPath, obtainCredentials } from './credentials.js';
import type { Logger } from './logger.js';
import { HollowMachineReader } from './machine/hollow.js';
import { hollowRuntimes } from './pods/runtimes.js';

/**
 * Hollow nodes per shared connection (a real agent has one of its own). Small enough that a
 * burst of calls timing out together stays under the server's HTTP/2 reset limit (nghttp2
 * allows a burst of 1,000 RST_STREAMs, then 33/s, before it closes the connection with
 * INTERNAL_ERROR), and that losing one connection takes few nodes with it.
 */
export const NODES_PER_CONNECTION = 50;

/** Where a hollow node keeps its simulated containers, so that they outlive the agent process. */
export function hollowContainersPath(dataDir: string, nodeName: string): string {
  return join(dataDir, 'hollow', `${nodeName}.containers.json`);
}

export interface HollowNode {
  agent: NodeAgent;
  reader: HollowMachineReader;
  client: Client;
}

export interface HollowFleetOptions {
  count: number;
  /** Nodes are named <prefix>-0 … <prefix>-(count-1). */
  prefix: string;
  servers: string[];
  dataDir: string;
  joinToken?: string;
  /** Join even under names other machines hold (kubelab-agent --force). */
  force?: boolean;
  /** Settings for each node (its name is filled in). */
  config: (nodeName: string) => AgentConfig;
  logger: Logger;
  clock?: Clock;
  /** Starts are spread over this long so a big fleet does not arrive at once (default 10 s). */
  spreadMs?: number;
  onLeaseRenew?: (node: string, at: number, latencyMs: number) => void;
  /** Run the pods bound to each node with the hollow runtime, logs included (default true). */
  pods?: boolean;
  /** How long a hollow container takes to start (default 0). */
  containerStartDelayMs?: number;
  /** Told once when the control plane does not answer the first join yet (it is waited for). */
  onWaiting?: (message: string) => void;
}

export class HollowFleet {
  readonly nodes = new Map<string, HollowNode>();
  private stopped = false;

  constructor(private readonly options: HollowFleetOptions) {}

  /** Joins (or reuses the stored credentials of) every node, then starts them, spread out. */
  async start(): Promise<void> {
    const { count, prefix, servers, dataDir, joinToken, logger } = this.options;
    const clock = this.options.clock ?? realClock;
    const spread = Math.min(this.options.spreadMs ?? 10_000, count * 10);
    // One for the fleet: an outage is one line, not one per node.
    const contact = new ControlPlaneContact({ servers, logger, clock });
    for (let i = 0; i < count && !this.stopped; i++) {
      const name = `${prefix}-${i}`;
      const creds = await obtainCredentials({
        path: credentialsPath(dataDir, name),
        passwordPath: nodePasswordPath(dataDir, name),
        servers,
        joinToken,
        nodeName: name,
        force: this.options.force,
        clock,
        onWaiting: this.options.onWaiting,
      });
      // Shared connections, NODES_PER_CONNECTION nodes on each: thousands of nodes must not mean
      // thousands of sockets, but neither one socket whose loss (a missed keepalive answer
      // while an event loop stalls) fails every node's calls at once and has them all
      // reconnect, relist and rewrite their status together.
      const connection = {
        token: creds.token,
        caPem: creds.caPem,
        shareConnection: true,
        callStream: true,
        channelOptions: { 'kubelab.hollow_connection': Math.floor(i / NODES_PER_CONNECTION) },
      };
      const client = failoverClient(creds.servers, connection);
      const reader = new HollowMachineReader({ name, index: i, now: () => clock.now() });
      const pods = this.options.pods !== false;
      const agent = new NodeAgent({
        client,
        contact,
        reader,
        pods: pods
          ? hollowRuntimes(clock, this.options.containerStartDelayMs, hollowContainersPath(dataDir, name))
          : undefined,
        tunnel: pods ? { servers: creds.servers, ...connection } : undefined,
        config: this.options.config(name),
        logger: logger.child({ node: name }),
        clock,
        onLeaseRenew: this.options.onLeaseRenew
          ? (at, ms) => this.options.onLeaseRenew!(name, at, ms)
          : undefined,
      });
      this.nodes.set(name, { agent, reader, client });
      agent.start();
      if (spread && i < count - 1) await new Promise((r) => setTimeout(r, spread / count));
    }
  }

  node(name: string): HollowNode {
    const n = this.nodes.get(name);
    if (!n) throw new Error(`no hollow node ${name}`);
    return n;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all([...this.nodes.values()].map((n) => n.agent.stop()));
    for (const n of this.nodes.values()) n.client.close();
  }
}

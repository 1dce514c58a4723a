/**
 * What one client may hold on the gRPC server: connections, streams, turns at sending a large
 * list. The defaults leave generous room for hollow fleets (NODES_PER_CONNECTION = 50 nodes
 * multiplexed on each connection, ~100 connections from one process for 5,000 nodes, several
 * fleets on one machine in the benchmarks) and for a lab behind NAT, where every agent comes
 * from the same address; in-process clients (the GUI bridge, the controllers) hold none.
 */

export interface ServerLimits {
  /**
   * A connection that has not finished its TLS handshake and sent the HTTP/2 preface this long
   * after it was accepted is closed: a connection that never speaks holds a socket for nothing.
   */
  prefaceTimeoutMs: number;
  /** Connections open at once from one client address; more are closed as they arrive. 0: no limit. */
  maxConnectionsPerAddress: number;
  /**
   * Streams (calls) open at once on one connection, advertised to the client in HTTP/2
   * SETTINGS_MAX_CONCURRENT_STREAMS: a client queues its further calls until one ends, and one
   * that ignores the setting has its connection closed with PROTOCOL_ERROR (Node's HTTP/2).
   */
  maxConcurrentStreams: number;
  /** List answers of at least this many bytes are "large": they take turns (below). */
  largeListBytes: number;
  /**
   * Large list answers handed to HTTP/2 at once. Each costs tens of milliseconds of CPU in one
   * go (framing, encryption); taking turns lets other clients' small calls run in between.
   */
  largeListConcurrency: number;
  /**
   * A large list's turn ends when its answer has been handed to HTTP/2, when its call ends, or
   * after this long, whichever is first: a client that does not read cannot keep the turn.
   */
  largeListTurnMs: number;
}

export const DEFAULT_SERVER_LIMITS: ServerLimits = {
  // Kubernetes' apiserver gives a TLS handshake 10 s; a client on a slow link still makes it.
  prefaceTimeoutMs: 10_000,
  // 10× a 5,000-node hollow fleet (~100 connections), and 2.5× a lab of 200 machines behind
  // one NAT address (an agent holds two connections: its API client and its log tunnel).
  maxConnectionsPerAddress: 1_000,
  // kube-apiserver's --http2-max-streams-per-connection default. A hollow connection carries
  // ~150 long-lived streams (50 nodes × Node watch, Pod watch, tunnel) plus unary calls: a
  // burst beyond 1,000 (pod status writes for many new pods) waits at the client, not fails.
  maxConcurrentStreams: 1_000,
  // An agent's lists (its Node, its pods) stay far below; a whole-cluster list goes over.
  largeListBytes: 1024 * 1024,
  largeListConcurrency: 1,
  largeListTurnMs: 1_000,
};

export function serverLimits(overrides: Partial<ServerLimits> = {}): ServerLimits {
  const limits = { ...DEFAULT_SERVER_LIMITS };
  for (const [key, value] of Object.entries(overrides) as Array<[keyof ServerLimits, number | undefined]>) {
    if (value === undefined) continue;
    if (!Number.isFinite(value) || value < 0) {
      throw new Error(`server limit ${key} must be a number, 0 or more (got ${value})`);
    }
    limits[key] = value;
  }
  for (const key of ['prefaceTimeoutMs', 'maxConcurrentStreams', 'largeListConcurrency'] as const) {
    if (limits[key] < 1) {
      throw new Error(
        `server limit ${key} must be at least 1 (got ${limits[key]}): 0 would refuse every client`,
      );
    }
  }
  return limits;
}

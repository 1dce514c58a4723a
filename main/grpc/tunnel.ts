/**
 * The agents' reverse tunnels (kubelab.v1.AgentTunnel). Agents sit behind NAT and open no
 * port, so each keeps one stream open to the control plane and the control plane sends its
 * requests down it. This registry keeps one live tunnel per node (a newer connection from the
 * node replaces the older: the old one is usually a dead connection not yet noticed) and
 * multiplexes log streams on each by id.
 *
 * Flow control is by accounting, not by pausing the tunnel (which would stall every stream on
 * it for one slow reader): bytes handed to a reader and not yet taken count against a
 * per-stream limit, and a stream past it is cancelled at the agent and ended with an error.
 * A slow reader therefore costs at most that limit. Either side going away ends every stream
 * on the tunnel. Transport-neutral: agenttunnel.ts feeds it the gRPC stream's messages.
 */
import { ApiError, type Reason } from '../../client/api/errors.js';
import type { LocalLogSink, LocalLogStream } from '../../client/api/local.js';
import type { TunnelDown, TunnelUp } from '../../proto/gen/kubelab/v1/tunnel.js';
import type { AgentLogRequest, LogTunnels, PodLogTarget } from '../apiserver/podlogs.js';
import type { Logger } from '../logging.js';

/** The agent's end of a tunnel, as the registry drives it. */
export interface TunnelLink {
  send(msg: TunnelDown): void;
  /** Ends the agent's Connect call: with an error status, or OK. */
  close(err?: ApiError): void;
}

export interface TunnelRegistryOptions {
  logger: Logger;
  /** Per log stream: bytes handed to its reader and not yet taken before it is stopped (default 4 MiB). */
  maxBufferedBytesPerStream?: number;
  /** Log streams open at once on one tunnel (default 256). */
  maxStreamsPerTunnel?: number;
}

export const DEFAULT_MAX_BUFFERED_BYTES_PER_STREAM = 4 * 1024 * 1024;
export const DEFAULT_MAX_STREAMS_PER_TUNNEL = 256;
/** An agent's error message is shown to people and travels in a gRPC trailer: keep it short. */
const MAX_AGENT_MESSAGE = 2000;
const MAX_ID = 0xffffffff;

/** Reasons an agent may end a stream with; anything else (or nothing) is an InternalError. */
const AGENT_REASONS = new Set<Reason>([
  'NotFound',
  'BadRequest',
  'Invalid',
  'FailedPrecondition',
  'Unavailable',
  'Timeout',
  'TooManyRequests',
  'RequestEntityTooLarge',
  'NotImplemented',
  'InternalError',
]);

interface LogStreamState {
  readonly id: number;
  readonly sink: LocalLogSink;
  readonly what: string;
  /** Bytes handed to the sink and not yet taken. */
  pending: number;
  live: boolean;
}

export function notConnected(nodeName: string): ApiError {
  return new ApiError(
    'FailedPrecondition',
    `the agent on node ${nodeName} is not connected; is it running? Check kubelab-agent on ${nodeName} (systemctl status kubelab-agent) and that it can reach the control plane, then try again`,
    { kind: 'Node', name: nodeName },
  );
}

/** One node's live tunnel and the log streams multiplexed on it. */
export class AgentTunnel {
  private readonly streams = new Map<number, LogStreamState>();
  private nextId = 1;
  private closed = false;

  constructor(
    readonly nodeName: string,
    private readonly link: TunnelLink,
    private readonly registry: TunnelRegistry,
    private readonly limits: { bytes: number; streams: number },
  ) {}

  get openStreams(): number {
    return this.streams.size;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** A message from the agent. Unknown ids are streams already stopped here: dropped. */
  receive(msg: TunnelUp): void {
    if (this.closed) return;
    if (msg.data) {
      const s = this.streams.get(msg.data.id ?? 0);
      if (s) this.deliver(s, msg.data.data ?? Buffer.alloc(0));
    } else if (msg.end) {
      const s = this.streams.get(msg.end.id ?? 0);
      if (!s) return;
      this.remove(s);
      s.sink.end(msg.end.error !== undefined ? this.agentError(s, msg.end.error, msg.end.reason) : undefined);
    }
    // A repeated hello, or a message kind from a newer agent: nothing to do.
  }

  open(req: AgentLogRequest, sink: LocalLogSink, what: string): LocalLogStream {
    if (this.closed) throw notConnected(this.nodeName);
    if (this.streams.size >= this.limits.streams) {
      throw new ApiError(
        'TooManyRequests',
        `${this.streams.size} log streams are already open to node ${this.nodeName}; stop some (or wait for them to end) and try again`,
        { retryAfterSeconds: 1 },
      );
    }
    const id = this.allocateId();
    const s: LogStreamState = { id, sink, what, pending: 0, live: true };
    this.streams.set(id, s);
    this.link.send({
      open: {
        id,
        podUid: req.podUid,
        container: req.container,
        follow: req.follow,
        previous: req.previous,
        timestamps: req.timestamps,
        ...(req.tailLines !== undefined ? { tailLines: req.tailLines } : {}),
        ...(req.sinceTime !== undefined ? { sinceTime: req.sinceTime } : {}),
        ...(req.limitBytes !== undefined ? { limitBytes: req.limitBytes } : {}),
      },
    });
    // The reader stopped: tell the agent; the reader expects no `end`.
    return { stop: () => this.cancel(s) };
  }

  /** The tunnel is gone (or replaced): every stream on it ends with `err`. */
  shutdown(err: ApiError): void {
    if (this.closed) return;
    this.closed = true;
    for (const s of [...this.streams.values()]) {
      this.remove(s);
      s.sink.end(err);
    }
  }

  /** Ends the agent's call too (replaced, or the server is stopping). */
  close(err: ApiError, streamsErr: ApiError): void {
    this.shutdown(streamsErr);
    this.link.close(err);
  }

  private deliver(s: LogStreamState, chunk: Buffer): void {
    if (!chunk.length) return;
    // A lone chunk always goes through (chunks are small), so a limit below one chunk cannot wedge.
    if (s.pending > 0 && s.pending + chunk.length > this.limits.bytes) {
      this.cancel(s);
      s.sink.end(
        new ApiError(
          'TooManyRequests',
          `the log stream of ${s.what} was stopped because it was not read fast enough (${mib(this.limits.bytes)} waiting to be read); read it faster, or ask for less (tailLines, sinceSeconds, limitBytes)`,
        ),
      );
      return;
    }
    s.pending += chunk.length;
    this.registry.adjustBuffered(chunk.length);
    let taken = false;
    s.sink.data(chunk, () => {
      if (taken) return;
      taken = true;
      if (!s.live) return;
      s.pending -= chunk.length;
      this.registry.adjustBuffered(-chunk.length);
    });
  }

  private cancel(s: LogStreamState): void {
    if (!s.live) return;
    this.remove(s);
    if (!this.closed) this.link.send({ cancel: { id: s.id } });
  }

  private remove(s: LogStreamState): void {
    if (!s.live) return;
    s.live = false;
    this.streams.delete(s.id);
    this.registry.adjustBuffered(-s.pending);
    s.pending = 0;
  }

  private allocateId(): number {
    for (;;) {
      const id = this.nextId;
      this.nextId = id >= MAX_ID ? 1 : id + 1;
      if (!this.streams.has(id)) return id;
    }
  }

  private agentError(s: LogStreamState, message: string, reason: string | undefined): ApiError {
    const r = AGENT_REASONS.has(reason as Reason) ? (reason as Reason) : 'InternalError';
    const text = message.length > MAX_AGENT_MESSAGE ? `${message.slice(0, MAX_AGENT_MESSAGE)}…` : message;
    return new ApiError(
      r,
      `the agent on node ${this.nodeName} could not serve the log of ${s.what}: ${text || 'no reason given'}`,
    );
  }
}

function mib(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${Math.round((bytes / 1024 / 1024) * 10) / 10} MiB` : `${bytes} bytes`;
}

export class TunnelRegistry implements LogTunnels {
  private readonly tunnels = new Map<string, AgentTunnel>();
  private buffered = 0;
  private peak = 0;
  private stopped = false;
  private readonly limits: { bytes: number; streams: number };

  constructor(private readonly options: TunnelRegistryOptions) {
    this.limits = {
      bytes: options.maxBufferedBytesPerStream ?? DEFAULT_MAX_BUFFERED_BYTES_PER_STREAM,
      streams: options.maxStreamsPerTunnel ?? DEFAULT_MAX_STREAMS_PER_TUNNEL,
    };
  }

  /**
   * Bytes handed to log readers and not yet taken, over the streams still open: what slow
   * readers hold on this server. Bounded by the per-stream limit times the open streams.
   */
  get bufferedBytes(): number {
    return this.buffered;
  }

  /** The most `bufferedBytes` has been since `resetPeak()` (or the start): for tests and tuning. */
  get peakBufferedBytes(): number {
    return this.peak;
  }

  resetPeak(): void {
    this.peak = this.buffered;
  }

  /** Nodes with a live tunnel. */
  nodes(): string[] {
    return [...this.tunnels.keys()].sort();
  }

  connected(nodeName: string): boolean {
    return this.tunnels.has(nodeName);
  }

  /** Log streams open across every tunnel. */
  get openStreams(): number {
    let n = 0;
    for (const t of this.tunnels.values()) n += t.openStreams;
    return n;
  }

  /** A node's agent connected (its hello checked): it becomes the node's tunnel. */
  attach(nodeName: string, link: TunnelLink): AgentTunnel {
    if (this.stopped) {
      const err = new ApiError('Unavailable', 'the control plane is shutting down; the agent will reconnect');
      link.close(err);
      throw err;
    }
    const tunnel = new AgentTunnel(nodeName, link, this, this.limits);
    const old = this.tunnels.get(nodeName);
    this.tunnels.set(nodeName, tunnel);
    if (old) {
      this.options.logger.warn(
        { node: nodeName },
        'a newer tunnel from this node replaced the older one (a reconnect; or two agents share one credential)',
      );
      old.close(
        new ApiError(
          'Conflict',
          `a newer tunnel from node ${nodeName} replaced this one; if two agents run with this node's credential, stop one`,
        ),
        new ApiError(
          'Unavailable',
          `the agent on node ${nodeName} reconnected, which ended this log stream; run the command again`,
        ),
      );
    } else this.options.logger.info({ node: nodeName }, 'agent tunnel connected');
    return tunnel;
  }

  /** The tunnel's connection went away: its streams end, and the node has no tunnel until it reconnects. */
  detach(tunnel: AgentTunnel): void {
    if (this.tunnels.get(tunnel.nodeName) === tunnel) {
      this.tunnels.delete(tunnel.nodeName);
      this.options.logger.info({ node: tunnel.nodeName }, 'agent tunnel disconnected');
    }
    tunnel.shutdown(
      new ApiError(
        'Unavailable',
        `the connection to the agent on node ${tunnel.nodeName} was lost while streaming the log; run the command again once it is back`,
      ),
    );
  }

  openLogs(target: PodLogTarget, sink: LocalLogSink): LocalLogStream {
    const tunnel = this.tunnels.get(target.nodeName);
    if (!tunnel || tunnel.isClosed) throw notConnected(target.nodeName);
    return tunnel.open(
      target.request,
      sink,
      `container ${target.container} of pod ${target.namespace}/${target.pod}`,
    );
  }

  /** The server is stopping: every tunnel and stream ends (agents reconnect to another replica or later). */
  close(): void {
    this.stopped = true;
    const err = new ApiError('Unavailable', 'the control plane is shutting down; the agent will reconnect');
    const streamsErr = new ApiError(
      'Unavailable',
      'the control plane is shutting down, which ended this log stream; run the command again once it is back',
    );
    for (const t of [...this.tunnels.values()]) t.close(err, streamsErr);
    this.tunnels.clear();
  }

  /** @internal Kept by the tunnels as bytes are handed over and taken. */
  adjustBuffered(delta: number): void {
    this.buffered += delta;
    if (this.buffered > this.peak) this.peak = this.buffered;
  }
}

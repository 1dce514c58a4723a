/**
 * The agent's end of the reverse tunnel (kubelab.v1.AgentTunnel). Lab machines sit behind NAT
 * and open no port: the agent keeps one outbound Connect stream to the control plane, with the
 * same TLS and node credential as its API client, and serves the log requests that come down
 * it from a LogSource. When the stream drops it reconnects with backoff, moving to the next
 * replica when one does not answer. A request the control plane cancels (its reader stopped
 * or fell behind), or that the tunnel takes down with it, is aborted through its AbortSignal.
 */
import type * as grpc from '@grpc/grpc-js';
import {
  AgentTunnelService,
  type TunnelDown,
  type TunnelOpen,
  type TunnelUp,
} from '../proto/gen/kubelab/v1/tunnel.js';
import { ApiError } from '../client/api/errors.js';
import { Connection, toApiErrorFromGrpc, type ConnectionOptions } from '../client/grpc/connection.js';
import { Backoff, type BackoffOptions } from '../client/util/backoff.js';
import { realClock, type Clock } from '../client/util/clock.js';
import { Sleeper } from '../client/util/sleeper.js';
import type { ControlPlaneContact } from './contact.js';
import type { Logger } from './logger.js';
import type { LogRequest, LogSource } from './runtime/types.js';

export interface AgentTunnelClientOptions extends Omit<ConnectionOptions, 'server'> {
  /** The control plane's replicas (https://host:port): one tunnel, to the first that takes it. */
  servers: string[];
  /** This node: the credential's node (the control plane refuses any other). */
  nodeName: string;
  /** Where logs come from (the pod runtime). */
  source: LogSource;
  logger: Logger;
  clock?: Clock;
  /** Waits between reconnects (default 1 s doubling to 30 s, with jitter). */
  backoff?: BackoffOptions;
  /**
   * Per stream: bytes given to gRPC but not yet sent before the stream is given up (the
   * control plane cannot keep up), so a fast log never fills this machine's memory. 4 MiB.
   */
  maxPendingBytesPerStream?: number;
  /**
   * Hears whether the tunnel reaches the control plane, and logs outages once: failures to
   * reconnect meanwhile are logged at debug.
   */
  contact?: ControlPlaneContact;
}

const DEFAULT_BACKOFF: BackoffOptions = { initialMs: 1000, maxMs: 30_000, jitter: 0.5, resetAfterMs: 60_000 };
const DEFAULT_MAX_PENDING = 4 * 1024 * 1024;
/** Log bytes go up in pieces of at most this much (the control plane takes messages up to 4 MiB). */
export const MAX_TUNNEL_CHUNK = 64 * 1024;

type TunnelCall = grpc.ClientDuplexStream<TunnelUp, TunnelDown>;

interface ServedStream {
  readonly id: number;
  readonly abort: AbortController;
  /** Bytes written to the call and not yet sent. */
  pending: number;
  /** Over: nothing more is written for it. */
  ended: boolean;
}

export class AgentTunnelClient {
  private readonly clock: Clock;
  private readonly maxPending: number;
  private connections: Connection[] = [];
  private active = 0;
  private sleeper: Sleeper | undefined;
  private backoff: Backoff;
  private running: Promise<void> | undefined;
  private stopped = true;
  private call: TunnelCall | undefined;
  private live = false;
  /** Sleeping between tries (reconnectNow may cut it short). */
  private waiting = false;
  /** reconnectNow came during a try: the next one follows at once, on a fresh channel. */
  private retryAtOnce = false;
  private readonly streams = new Map<number, ServedStream>();
  /** The contact's mark when the session began, or was established (see ControlPlaneContact.mark). */
  private contactMark: number | undefined;

  constructor(private readonly options: AgentTunnelClientOptions) {
    if (!options.servers.length) throw new Error('AgentTunnelClient needs at least one server');
    this.clock = options.clock ?? realClock;
    this.maxPending = options.maxPendingBytesPerStream ?? DEFAULT_MAX_PENDING;
    this.backoff = new Backoff(options.backoff ?? DEFAULT_BACKOFF, this.clock);
  }

  /** The control plane has accepted the tunnel (and not lost it since). */
  get connected(): boolean {
    return this.live;
  }

  /** Log requests being served. */
  get activeStreams(): number {
    return this.streams.size;
  }

  start(): void {
    if (this.running) return;
    this.stopped = false;
    this.sleeper = new Sleeper(this.clock);
    this.connections = this.options.servers.map(
      (server) =>
        new Connection(
          { ...this.options, server },
          AgentTunnelService as unknown as grpc.ServiceDefinition,
          'kubelab.v1.AgentTunnel',
        ),
    );
    this.running = this.run();
  }

  /**
   * The control plane answers again (another call got through): open the tunnel now rather
   * than when its back-off ends, so logs work as soon as the node does.
   */
  reconnectNow(): void {
    if (this.stopped || this.live) return;
    this.backoff.reset();
    if (!this.waiting) {
      this.retryAtOnce = true;
      return;
    }
    this.freshChannel();
    this.sleeper?.wake();
  }

  /** Closes the tunnel and aborts every request being served. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.sleeper?.stop();
    this.abortAll();
    this.call?.cancel();
    await this.running;
    this.running = undefined;
    for (const c of this.connections) c.close();
    this.connections = [];
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      const server = this.options.servers[this.active];
      this.contactMark = this.options.contact?.mark();
      const { established, error } = await this.session(this.connections[this.active], server).catch(
        (err: unknown) => ({
          established: false,
          error: new ApiError('Unavailable', `cannot open the tunnel to ${server}: ${String(err)}`),
        }),
      );
      if (this.stopped) break;
      const contact = this.options.contact;
      if (error) contact?.observe(error, this.contactMark);
      if (this.retryAtOnce) {
        this.retryAtOnce = false;
        this.freshChannel();
        continue;
      }
      // A replica that never took the tunnel may be down: try the next one.
      if (!established && this.connections.length > 1)
        this.active = (this.active + 1) % this.connections.length;
      const delay = this.backoff.next();
      this.options.logger[contact?.explains(error) ? 'debug' : 'warn'](
        { server, err: error?.message, retryInMs: Math.round(delay) },
        established ? 'log tunnel dropped; reconnecting' : 'log tunnel could not connect; retrying',
      );
      this.waiting = true;
      await this.sleeper!.sleep(delay);
      this.waiting = false;
    }
  }

  /** A channel still backing off from an outage (up to 5 s) would fail the next try: dial afresh. */
  private freshChannel(): void {
    this.connections[this.active]?.reconnect();
  }

  /** One Connect stream, from hello to its end. */
  private session(conn: Connection, server: string): Promise<{ established: boolean; error?: ApiError }> {
    return new Promise((resolve) => {
      const client = conn.client as unknown as { connect(md: grpc.Metadata): TunnelCall };
      const call = client.connect(conn.metadata());
      this.call = call;
      let established = false;
      let settled = false;
      const done = (error?: ApiError) => {
        if (settled) return;
        settled = true;
        if (this.call === call) this.call = undefined;
        this.live = false;
        this.abortAll();
        resolve({ established, error });
      };
      call.on('metadata', () => {
        established = true;
        this.live = true;
        this.options.contact?.succeeded(this.contactMark);
        this.contactMark = this.options.contact?.mark();
        this.options.logger.info({ server, node: this.options.nodeName }, 'log tunnel connected');
      });
      call.on('data', (msg: TunnelDown) => this.handle(call, msg));
      call.on('error', (err: grpc.ServiceError) => done(toApiErrorFromGrpc(err, server)));
      call.on('end', () => done());
      call.write({ hello: { nodeName: this.options.nodeName } });
    });
  }

  private handle(call: TunnelCall, msg: TunnelDown): void {
    if (msg.open) this.serve(call, msg.open);
    else if (msg.cancel) {
      const s = this.streams.get(msg.cancel.id ?? 0);
      if (s) this.finish(call, s, { abort: true, silent: true });
    }
    // Anything else is a request kind from a newer control plane: not served here.
  }

  private serve(call: TunnelCall, open: TunnelOpen): void {
    const id = open.id ?? 0;
    if (this.streams.has(id)) {
      this.send(call, {
        end: { id, error: `stream ${id} is already open on this tunnel`, reason: 'BadRequest' },
      });
      return;
    }
    const s: ServedStream = { id, abort: new AbortController(), pending: 0, ended: false };
    this.streams.set(id, s);
    const req: LogRequest = {
      podUid: open.podUid ?? '',
      container: open.container ?? '',
      follow: open.follow ?? false,
      previous: open.previous ?? false,
      timestamps: open.timestamps ?? false,
      ...(open.tailLines !== undefined ? { tailLines: open.tailLines } : {}),
      ...(open.sinceTime !== undefined ? { sinceTime: open.sinceTime } : {}),
      ...(open.limitBytes !== undefined ? { limitBytes: open.limitBytes } : {}),
    };
    const write = (chunk: Buffer): boolean => {
      if (s.ended || this.call !== call) return false;
      for (let off = 0; off < chunk.length; off += MAX_TUNNEL_CHUNK) {
        const piece = chunk.subarray(off, off + MAX_TUNNEL_CHUNK);
        s.pending += piece.length;
        call.write({ data: { id, data: piece } }, () => {
          s.pending -= piece.length;
        });
      }
      if (s.pending > this.maxPending) {
        this.finish(call, s, {
          abort: true,
          error: new ApiError(
            'TooManyRequests',
            `the connection to the control plane could not carry the log as fast as it was written (${s.pending} bytes waiting); ask for less (tailLines, limitBytes) or try again`,
          ),
        });
        return false;
      }
      return true;
    };
    (async () => this.options.source.stream(req, write, s.abort.signal))().then(
      () => this.finish(call, s, {}),
      (err: unknown) => this.finish(call, s, { error: err }),
    );
  }

  /**
   * The stream is over: `abort` stops a source still running; `silent` when the control plane
   * already forgot it (it cancelled); otherwise it hears the end, with the error if any.
   */
  private finish(
    call: TunnelCall,
    s: ServedStream,
    how: { abort?: boolean; silent?: boolean; error?: unknown },
  ): void {
    if (s.ended) return;
    s.ended = true;
    if (this.streams.get(s.id) === s) this.streams.delete(s.id);
    if (how.abort) s.abort.abort();
    if (how.silent) return;
    const err = how.error;
    if (err === undefined) {
      this.send(call, { end: { id: s.id } });
      return;
    }
    const message = err instanceof Error ? err.message : String(err);
    const reason = err instanceof ApiError ? err.reason : 'InternalError';
    if (!(err instanceof ApiError))
      this.options.logger.warn({ err: message, stream: s.id }, 'serving a log failed');
    this.send(call, { end: { id: s.id, error: message, reason } });
  }

  private send(call: TunnelCall, msg: TunnelUp): void {
    if (this.call === call) call.write(msg);
  }

  /** The tunnel is gone: every request being served stops (the control plane ended them too). */
  private abortAll(): void {
    for (const s of [...this.streams.values()]) {
      s.ended = true;
      s.abort.abort();
    }
    this.streams.clear();
  }
}

/**
 * Holds back a connection that keeps sending requests the server keeps refusing.
 *
 * Priority and fairness queue and refuse requests, but refusing still costs: every request is
 * read, decrypted, framed, authenticated and answered before it can be turned away, all on the
 * one event loop that also carries the agents' lease renewals. A client flooding at ten times
 * what the server can do would have it spend its time refusing. Once an HTTP/2 connection (gRPC,
 * or REST over HTTP/2) has been refused BURST times within a second, the server sets the
 * connection's initial stream window to 0 in its HTTP/2 SETTINGS, for as long as its retry hint
 * says, then restores it. The client may still open streams, but may send no request body on
 * them: its requests wait, unread and unanswered, in its own HTTP/2 flow control, and go on when
 * the window comes back. Nothing is refused, dropped or reset; answers to what it already sent
 * still go out, and the server's time goes to everyone else. Agents' connections are never
 * braked: their heartbeats share them.
 *
 * Why not tell the client to open no new streams (SETTINGS_MAX_CONCURRENT_STREAMS 0)? Streams it
 * opened before the SETTINGS arrived are then refused (REFUSED_STREAM). grpc-js resends a refused
 * call only once, and Node's HTTP/2 counts every refused stream as an invalid frame and closes
 * the connection after 1,000 of them over its lifetime (maxSessionInvalidFrames, its
 * rapid-reset guard): a flood kept going for a minute had its connections dropped, failing every
 * call in flight on them. A request without a body (a REST GET) is not held; it is cheap to
 * refuse.
 *
 * (Stopping the socket's reads does not hold: Node's HTTP/2 session restarts them after each
 * write.)
 */
import type { Http2Session } from 'node:http2';
import { ApiError } from '../../client/api/errors.js';
import type { Identity } from '../../client/api/local.js';
import type { Clock, TimerHandle } from '../../client/util/clock.js';
import type { Logger } from '../logging.js';

/** Refusals within WINDOW_MS that brake a connection. */
export const BRAKE_BURST = 16;
const WINDOW_MS = 1000;
/**
 * After a brake comes off, refusals do not count towards the next one for this long: the client
 * sends every request its window held at once, and they must be answered (refused, mostly) before
 * the connection is braked again. Braked again after the first BURST of them, the rest would stay
 * held for another round, and a call could sit out several rounds past its client's deadline.
 */
export const BRAKE_GRACE_MS = 2000;
/**
 * A connection braked again soon after its last brake came off is held twice as long as the
 * last time, up to this: each brake lets through, and has answered, every request the client
 * held meanwhile, and a client keeping a thousand calls in flight would otherwise have them
 * answered (and sent again) every second or two, at a cost to both sides.
 */
export const MAX_BRAKE_MS = 10_000;
/** A brake this long after the last one came off starts again from the client's hint. */
const STRIKES_FORGOTTEN_MS = 30_000;

interface Braking {
  windowStart: number;
  refusals: number;
  /** Set while braked: when the brake comes off. */
  until?: TimerHandle;
  /**
   * The last brake's length, and when it came off (clock ms): refusals within BRAKE_GRACE_MS of
   * it do not count (what it held arriving), and a quick return is held longer.
   */
  lastBrakeMs: number;
  releasedAt: number;
  /** Set while the window given back waits to be sent (restore). */
  restoring?: TimerHandle;
  /**
   * The initial stream window to restore, read before the first brake: later, the session's
   * local settings may still say 0, if the client has not yet acknowledged the window given back.
   */
  readonly streamWindow: number | undefined;
}

export class IngressBrake {
  private readonly state = new WeakMap<Http2Session, Braking>();
  private braking = 0;

  constructor(
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  /** Connections braked right now (for tests and metrics). */
  get braked(): number {
    return this.braking;
  }

  /**
   * `running` as it is; if it fails with TooManyRequests for someone other than an agent, the
   * refusal counts against `session` (a gRPC call's, or REST over HTTP/2).
   */
  watch<T>(running: Promise<T>, id: Identity, session: () => Http2Session | undefined): Promise<T> {
    // Agents' connections carry their heartbeats: never braked.
    if (id.role === 'node') return running;
    return running.catch((err: unknown) => {
      if (err instanceof ApiError && err.reason === 'TooManyRequests')
        this.refused(session(), err.details.retryAfterSeconds ?? 1);
      throw err;
    });
  }

  private refused(session: Http2Session | undefined, retryAfterSeconds: number): void {
    if (!session || session.destroyed || session.closed) return;
    let s = this.state.get(session);
    if (!s) {
      s = {
        windowStart: 0,
        refusals: 0,
        lastBrakeMs: 0,
        releasedAt: -Infinity,
        streamWindow: session.localSettings.initialWindowSize,
      };
      this.state.set(session, s);
      session.once('close', () => this.release(session, s!, false));
    }
    if (s.until) return;
    const now = this.clock.now();
    if (now - s.releasedAt < BRAKE_GRACE_MS) return;
    if (now - s.windowStart >= WINDOW_MS) {
      s.windowStart = now;
      s.refusals = 0;
    }
    if (++s.refusals < BRAKE_BURST) return;
    // Refused by Node while the client has not acknowledged our last SETTINGS: not braked now.
    if (!this.setStreamWindow(session, 0)) return;
    if (s.restoring) this.clock.clearTimeout(s.restoring);
    s.restoring = undefined;
    this.braking++;
    const hinted = Math.max(1, retryAfterSeconds) * 1000;
    const again = now - s.releasedAt < STRIKES_FORGOTTEN_MS;
    const ms = Math.min(MAX_BRAKE_MS, Math.max(hinted, again ? s.lastBrakeMs * 2 : 0));
    s.lastBrakeMs = ms;
    const braking = s;
    s.until = this.clock.setTimeout(() => this.release(session, braking, true), ms);
    this.logger.debug(
      { peer: `${session.socket?.remoteAddress}:${session.socket?.remotePort}`, refusals: s.refusals, ms },
      'holding back a connection whose requests keep being refused',
    );
  }

  private release(session: Http2Session, s: Braking, restore: boolean): void {
    if (!s.until) return;
    this.clock.clearTimeout(s.until);
    s.until = undefined;
    s.refusals = 0;
    s.releasedAt = this.clock.now();
    this.braking--;
    if (restore) this.restore(session, s);
  }

  /** Gives the connection its stream window back, trying again while its client has not acknowledged earlier SETTINGS. */
  private restore(session: Http2Session, s: Braking): void {
    s.restoring = undefined;
    if (session.destroyed || session.closed) return;
    if (this.setStreamWindow(session, s.streamWindow)) return;
    s.restoring = this.clock.setTimeout(() => this.restore(session, s), WINDOW_MS);
  }

  /** Sends the connection an initial stream window (undefined: the default); false if Node refused to. */
  private setStreamWindow(session: Http2Session, size: number | undefined): boolean {
    try {
      session.settings(size === undefined ? {} : { initialWindowSize: size });
      return true;
    } catch (err) {
      // ERR_HTTP2_MAX_PENDING_SETTINGS_ACK: the client has not read our last SETTINGS yet.
      this.logger.debug({ err: (err as Error).message }, "cannot change a connection's stream window now");
      return false;
    }
  }
}

/**
 * The client's end of Resources.Calls: unary calls sent as messages on one long-lived stream
 * instead of an HTTP/2 stream each (main/grpc/calls.ts says why the server prefers it). An
 * agent's Lease renewals, NodeMetrics and status writes take it.
 *
 * A call here behaves as the unary call would: the same answer, the same ApiError for a
 * failure, its own deadline. The stream is opened at the first call and again after it ends;
 * calls in flight when it breaks fail as a dropped connection does (Unavailable), which the
 * callers already retry. A server that does not know the method (older than this client) gets
 * the calls as unary calls from then on.
 */
import * as grpc from '@grpc/grpc-js';
import type { CallRequest, CallResult } from '../../proto/gen/kubelab/v1/api.js';
import { ApiError } from '../api/errors.js';
import { HEARTBEAT_KINDS } from '../api/wellknown.js';

/** As many as the server takes in flight on one stream; the rest wait here for a slot. */
export const MAX_CALLS_IN_FLIGHT = 64;

/**
 * Slots only heartbeats (Lease and Node calls) may take. The other calls of 50 hollow nodes
 * starting their pods can fill the rest, each waiting its turn in the server's `system` level
 * for seconds; a Lease renewal queued here behind them missed its 40 s grace period at 10,000
 * nodes. With these it is sent at once and served in `node-high`.
 */
export const HEARTBEAT_SLOTS = 16;

/** Whether a request (its `kind` field, as every request of these methods has) is a heartbeat. */
function isHeartbeat(request: unknown): boolean {
  const kind = (request as { kind?: unknown } | null)?.kind;
  return typeof kind === 'string' && HEARTBEAT_KINDS.has(kind);
}

/**
 * The methods a Calls stream carries. List stays a call of its own: its answer can be large,
 * and the server paces large lists in a layer this stream does not pass through.
 */
export const STREAMABLE_METHODS = ['Get', 'Create', 'Update', 'UpdateStatus', 'Patch', 'Delete', 'Bind'];

export interface CallStreamOptions {
  /** Opens the Calls stream (with the token's metadata). */
  open(): grpc.ClientDuplexStream<CallRequest, CallResult>;
  /** The method as a unary call of its own: when the server has no Calls. */
  unary(method: string, request: unknown): Promise<unknown>;
  /** Per method key (get, update, …): its RPC name and its request and response codecs. */
  method(key: string): { name: string; encode(request: unknown): Buffer; decode(bytes: Buffer): unknown };
  /**
   * The ApiError the unary call would have thrown for this status (`status`: the
   * kubelab-status-bin trailer it would have carried).
   */
  toError(code: grpc.status, details: string, status?: Buffer): ApiError;
  timeoutMs: number;
}

interface Pending {
  heartbeat: boolean;
  resolve(value: unknown): void;
  reject(err: unknown): void;
  decode(bytes: Buffer): unknown;
  timer: ReturnType<typeof setTimeout>;
  /** For sending again as a unary call, should the server have no Calls. */
  method: string;
  request: unknown;
}

export class CallStream {
  private stream?: grpc.ClientDuplexStream<CallRequest, CallResult>;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  /** Calls in flight that are not heartbeats. */
  private others = 0;
  /** Calls waiting for a slot, heartbeats and the rest apart; each wakes to send itself. */
  private readonly waiting = { heartbeat: [] as Array<() => void>, other: [] as Array<() => void> };
  private unsupported = false;

  constructor(private readonly options: CallStreamOptions) {}

  call<Res>(method: string, request: unknown): Promise<Res> {
    if (this.unsupported) return this.options.unary(method, request) as Promise<Res>;
    const heartbeat = isHeartbeat(request);
    return new Promise<Res>((resolve, reject) => {
      // The deadline counts from here, as a unary call's does, waiting for a slot included.
      const deadline = Date.now() + this.options.timeoutMs;
      const send = () => {
        if (Date.now() >= deadline)
          return reject(this.options.toError(grpc.status.DEADLINE_EXCEEDED, 'Deadline exceeded'));
        if (!this.hasSlot(heartbeat)) return wait();
        if (this.unsupported)
          return void this.options.unary(method, request).then(resolve as (v: unknown) => void, reject);
        try {
          this.send(method, request, heartbeat, deadline, resolve as (v: unknown) => void, reject);
        } catch (err) {
          reject(err); // a request that cannot be encoded
        }
      };
      const wait = () => {
        const queue = heartbeat ? this.waiting.heartbeat : this.waiting.other;
        const timer = setTimeout(() => {
          const i = queue.indexOf(wake);
          if (i >= 0) queue.splice(i, 1);
          reject(this.options.toError(grpc.status.DEADLINE_EXCEEDED, 'Deadline exceeded'));
        }, deadline - Date.now());
        timer.unref?.();
        const wake = () => {
          clearTimeout(timer);
          send();
        };
        queue.push(wake);
      };
      send();
    });
  }

  private hasSlot(heartbeat: boolean): boolean {
    if (this.pending.size >= MAX_CALLS_IN_FLIGHT) return false;
    return heartbeat || this.others < MAX_CALLS_IN_FLIGHT - HEARTBEAT_SLOTS;
  }

  private send(
    method: string,
    request: unknown,
    heartbeat: boolean,
    deadline: number,
    resolve: (v: unknown) => void,
    reject: (err: unknown) => void,
  ): void {
    const { name, encode, decode } = this.options.method(method);
    const id = this.nextId++;
    const timer = setTimeout(() => {
      const call = this.pending.get(id);
      if (!call) return;
      this.settle(id, call);
      reject(this.options.toError(grpc.status.DEADLINE_EXCEEDED, 'Deadline exceeded'));
    }, deadline - Date.now());
    timer.unref?.();
    this.pending.set(id, { heartbeat, resolve, reject, decode, timer, method, request });
    if (!heartbeat) this.others++;
    this.current().write({ id, method: name, request: encode(request) });
  }

  /** The call is answered or given up: its slot goes to the next waiting call. */
  private settle(id: number, call: Pending): void {
    this.pending.delete(id);
    clearTimeout(call.timer);
    if (!call.heartbeat) this.others--;
    this.wakeWaiting();
  }

  /** Ends the stream; calls in flight fail as on a dropped connection. */
  close(): void {
    this.stream?.cancel();
  }

  private current(): grpc.ClientDuplexStream<CallRequest, CallResult> {
    if (this.stream) return this.stream;
    const stream = this.options.open();
    this.stream = stream;
    stream.on('data', (result: CallResult) => this.answered(result));
    // Every end of the call comes with its status, errors included: that is where it is read.
    stream.on('error', () => undefined);
    stream.on('status', (status: grpc.StatusObject) =>
      this.broken(
        stream,
        status.code === grpc.status.OK
          ? { code: grpc.status.UNAVAILABLE, details: 'the server ended the call stream' }
          : status,
      ),
    );
    return stream;
  }

  private answered(result: CallResult): void {
    const id = result.id ?? 0;
    const call = this.pending.get(id);
    if (!call) return; // its deadline passed
    this.settle(id, call);
    if (!result.code) {
      try {
        call.resolve(call.decode(Buffer.from(result.response ?? Buffer.alloc(0))));
      } catch (err) {
        call.reject(
          new ApiError('InternalError', `the server's answer could not be read: ${(err as Error).message}`),
        );
      }
      return;
    }
    call.reject(
      this.options.toError(
        result.code,
        result.message ?? '',
        result.status?.length ? Buffer.from(result.status) : undefined,
      ),
    );
  }

  private broken(
    stream: grpc.ClientDuplexStream<CallRequest, CallResult>,
    status: { code: grpc.status; details: string },
  ): void {
    if (this.stream !== stream) return;
    this.stream = undefined;
    const calls = [...this.pending.values()];
    this.pending.clear();
    this.others = 0;
    if (status.code === grpc.status.UNIMPLEMENTED) this.unsupported = true;
    for (const call of calls) {
      clearTimeout(call.timer);
      // The server never saw these: it has no such method. They go as unary calls.
      if (this.unsupported) this.options.unary(call.method, call.request).then(call.resolve, call.reject);
      else call.reject(this.options.toError(status.code, status.details));
    }
    this.wakeWaiting();
  }

  /** Wakes waiting calls while there are slots for them, heartbeats first. */
  private wakeWaiting(): void {
    while (this.waiting.heartbeat.length && this.hasSlot(true)) this.waiting.heartbeat.shift()!();
    while (this.waiting.other.length && this.hasSlot(false)) this.waiting.other.shift()!();
  }
}

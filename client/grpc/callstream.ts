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

/** As many as the server takes in flight on one stream; the rest wait here for a slot. */
export const MAX_CALLS_IN_FLIGHT = 64;

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
  private readonly waiting: Array<() => void> = [];
  private unsupported = false;

  constructor(private readonly options: CallStreamOptions) {}

  call<Res>(method: string, request: unknown): Promise<Res> {
    if (this.unsupported) return this.options.unary(method, request) as Promise<Res>;
    if (this.pending.size >= MAX_CALLS_IN_FLIGHT)
      return new Promise<void>((r) => this.waiting.push(r)).then(() => this.call<Res>(method, request));
    const { name, encode, decode } = this.options.method(method);
    return new Promise<Res>((resolve, reject) => {
      const id = this.nextId++;
      const timer = setTimeout(() => {
        if (!this.pending.delete(id)) return;
        this.freeSlot();
        reject(this.options.toError(grpc.status.DEADLINE_EXCEEDED, 'Deadline exceeded'));
      }, this.options.timeoutMs);
      timer.unref?.();
      this.pending.set(id, {
        resolve: resolve as (v: unknown) => void,
        reject,
        decode,
        timer,
        method,
        request,
      });
      this.current().write({ id, method: name, request: encode(request) });
    });
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
    this.pending.delete(id);
    clearTimeout(call.timer);
    this.freeSlot();
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
    if (status.code === grpc.status.UNIMPLEMENTED) this.unsupported = true;
    for (const call of calls) {
      clearTimeout(call.timer);
      // The server never saw these: it has no such method. They go as unary calls.
      if (this.unsupported) this.options.unary(call.method, call.request).then(call.resolve, call.reject);
      else call.reject(this.options.toError(status.code, status.details));
    }
    for (const wake of this.waiting.splice(0)) wake();
  }

  private freeSlot(): void {
    this.waiting.shift()?.();
  }
}

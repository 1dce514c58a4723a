/**
 * Raw gRPC calls with bytes the caller made: what any client, however broken or hostile, can
 * send. The answer is the status as it arrived — code, message, the kubelab-status-bin
 * trailer — and how long it took.
 */
import * as grpc from '@grpc/grpc-js';

export interface RawAnswer {
  code: number;
  details: string;
  /** The kubelab-status-bin trailer, parsed (undefined when absent or not JSON). */
  status?: { reason?: string; message?: string; details?: Record<string, unknown> };
  /** Bytes of the trailer as received. */
  statusBytes: number;
  /** Messages a stream sent before its status. */
  messages: number;
  ms: number;
}

function metadataFor(token: string | undefined): grpc.Metadata {
  const md = new grpc.Metadata();
  if (token !== undefined) md.set('authorization', `Bearer ${token}`);
  return md;
}

function answerOf(
  err: grpc.ServiceError | grpc.StatusObject | null,
  started: number,
  messages = 0,
): RawAnswer {
  const raw = err?.metadata?.get('kubelab-status-bin')?.[0];
  let status: RawAnswer['status'];
  if (raw) {
    try {
      status = JSON.parse(Buffer.from(raw as Buffer).toString());
    } catch {
      status = undefined;
    }
  }
  return {
    code: err?.code ?? 0,
    details: err?.details ?? '',
    status,
    statusBytes: raw ? Buffer.from(raw as Buffer).length : 0,
    messages,
    ms: performance.now() - started,
  };
}

/** A unary call: `method` is "/package.Service/Method". */
export function rawUnary(
  client: grpc.Client,
  method: string,
  bytes: Buffer,
  token?: string,
  deadlineMs = 30_000,
): Promise<RawAnswer> {
  const started = performance.now();
  return new Promise((resolve) => {
    client.makeUnaryRequest(
      method,
      (b: Buffer) => b,
      (b: Buffer) => b,
      bytes,
      metadataFor(token),
      { deadline: Date.now() + deadlineMs },
      (err) => resolve(answerOf(err, started)),
    );
  });
}

/**
 * A server-streaming call, ended by the client after its first message or `settleMs` of quiet
 * (a watch that was accepted answers with events, not a status): the status, or OK with the
 * number of messages received.
 */
export function rawStream(
  client: grpc.Client,
  method: string,
  bytes: Buffer,
  token?: string,
  settleMs = 15_000,
): Promise<RawAnswer> {
  const started = performance.now();
  return new Promise((resolve) => {
    let messages = 0;
    let done = false;
    const call = client.makeServerStreamRequest(
      method,
      (b: Buffer) => b,
      (b: Buffer) => b,
      bytes,
      metadataFor(token),
      { deadline: Date.now() + 30_000 },
    );
    const finish = (answer: RawAnswer) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      call.cancel();
      resolve(answer);
    };
    const timer = setTimeout(() => finish(answerOf(null, started, messages)), settleMs);
    call.on('data', () => {
      messages++;
      finish(answerOf(null, started, messages));
    });
    call.on('status', (s: grpc.StatusObject) => finish(answerOf(s.code === 0 ? null : s, started, messages)));
    call.on('error', () => undefined);
  });
}

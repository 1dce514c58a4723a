/**
 * A pod's log as the reader sees it (what `Client.logs` returns): the bytes wait here until
 * the reader takes them, and each chunk is acknowledged (`taken`) only then, so whoever
 * produces them (the control plane in-process, the gRPC transport over the network) can tell
 * how far behind the reader is and hold back or give up instead of buffering without end.
 */
import type { ApiError } from './api/errors.js';
import type { LocalLogSink, LocalLogStream } from './api/local.js';

/**
 * A running log stream: iterate it with `for await` (Buffers, in order, not split on lines).
 * The iteration ends when the log does and throws the ApiError the stream ended with;
 * `stop()` ends it from this side.
 */
export interface LogStream extends AsyncIterable<Buffer> {
  stop(): void;
}

export class LogQueue implements LogStream, LocalLogSink {
  private readonly chunks: Array<{ chunk: Buffer; taken: () => void }> = [];
  private waiting: (() => void) | undefined;
  private ended = false;
  private stopped = false;
  private error: ApiError | undefined;
  private handle: LocalLogStream | undefined;

  attach(handle: LocalLogStream): void {
    this.handle = handle;
    if (this.stopped) handle.stop();
  }

  data(chunk: Buffer, taken: () => void): void {
    if (this.stopped) {
      taken();
      return;
    }
    this.chunks.push({ chunk, taken });
    this.wake();
  }

  end(err?: ApiError): void {
    if (this.ended) return;
    this.ended = true;
    this.error = err;
    this.wake();
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.ended = true;
    // Nobody will read these: release them so the producer does not count them as pending.
    for (const c of this.chunks.splice(0)) c.taken();
    this.wake();
    this.handle?.stop();
  }

  private wake(): void {
    const w = this.waiting;
    this.waiting = undefined;
    w?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<Buffer> {
    try {
      for (;;) {
        const next = this.chunks.shift();
        if (next) {
          next.taken();
          yield next.chunk;
          continue;
        }
        if (this.ended) {
          if (this.error && !this.stopped) throw this.error;
          return;
        }
        await new Promise<void>((resolve) => (this.waiting = resolve));
      }
    } finally {
      this.stop();
    }
  }
}

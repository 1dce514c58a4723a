/**
 * Resources/Logs over gRPC: a server stream of LogChunks handed to a sink. A reader that falls
 * behind pauses the call, so HTTP/2 flow control pushes back to the server (which then stops
 * the stream if the reader stays behind) instead of this process buffering the whole log.
 */
import type * as grpc from '@grpc/grpc-js';
import type { LogChunk, LogsRequest } from '../../proto/gen/kubelab/v1/api.js';
import { ApiError } from '../api/errors.js';
import type { LocalLogSink, LocalLogStream } from '../api/local.js';
import { toApiErrorFromGrpc, type Connection } from './connection.js';

/** Unread bytes past which the call is paused, and below which it resumes. */
export const LOG_PAUSE_BYTES = 1024 * 1024;
export const LOG_RESUME_BYTES = 256 * 1024;

type LogsMethod = (req: LogsRequest, md: grpc.Metadata) => grpc.ClientReadableStream<LogChunk>;

export function openLogStream(
  connection: Connection,
  req: LogsRequest,
  sink: LocalLogSink,
): Promise<LocalLogStream> {
  const client = connection.client as unknown as { logs: LogsMethod };
  const call = client.logs(req, connection.metadata());
  let unread = 0;
  let paused = false;
  let cancelled = false;
  let ended = false;
  const finish = (err?: ApiError) => {
    if (ended) return;
    ended = true;
    sink.end(err);
  };
  return new Promise((resolve, reject) => {
    let started = false;
    // The server sends headers once the stream is open; without them the connection may be dead.
    const establish = setTimeout(() => {
      if (started) return;
      cancelled = true;
      ended = true;
      call.cancel();
      reject(
        new ApiError(
          'Unavailable',
          `the log stream was not opened within ${connection.timeoutMs / 1000} s; the connection may be dead, try again`,
        ),
      );
    }, connection.timeoutMs);
    establish.unref?.();
    const start = () => {
      if (started) return;
      started = true;
      clearTimeout(establish);
      resolve({
        stop: () => {
          cancelled = true;
          ended = true;
          call.cancel();
        },
      });
    };
    call.on('metadata', start);
    call.on('data', (m: LogChunk) => {
      start();
      const chunk = m.data;
      if (ended || !chunk?.length) return;
      unread += chunk.length;
      if (!paused && unread > LOG_PAUSE_BYTES) {
        paused = true;
        call.pause();
      }
      let done = false;
      sink.data(chunk, () => {
        if (done) return;
        done = true;
        unread -= chunk.length;
        if (paused && unread <= LOG_RESUME_BYTES) {
          paused = false;
          call.resume();
        }
      });
    });
    call.on('error', (err: grpc.ServiceError) => {
      if (cancelled) return;
      // grpc-js reports the status at once, even while received chunks still wait in the
      // paused stream: hand those over first, so the reader gets every byte before the error.
      while (call.read() !== null) {
        // Each read() goes through the 'data' handler above.
      }
      const e = toApiErrorFromGrpc(err, connection.options.server);
      if (!started) {
        ended = true;
        clearTimeout(establish);
        return reject(e);
      }
      finish(e);
    });
    call.on('end', () => {
      start();
      finish();
    });
  });
}

/**
 * Resources/Logs: authenticate, open the log through the apiserver (the same path the
 * in-process client takes), and write its chunks to the call. Each chunk counts as taken once
 * gRPC has handed it to the connection, so a client that stops reading shows up, through
 * HTTP/2 flow control, as bytes not taken — and the tunnel registry stops its stream.
 */
import * as grpc from '@grpc/grpc-js';
import type { ApiError } from '../../client/api/errors.js';
import type { LocalLogSink, LocalLogStream } from '../../client/api/local.js';
import type { LogChunk, LogsRequest } from '../../client/api/types.js';
import { toApiError, type ApiServer } from '../apiserver/apiserver.js';
import type { Logger } from '../logging.js';
import { identityOf, rejectMalformed } from './handlers.js';
import { revokedError } from './revocations.js';
import type { TokenStore } from './tokens.js';
import { toServiceError } from './wire.js';

export function logsHandler(
  api: ApiServer,
  tokens: TokenStore,
  logger: Logger,
): grpc.handleServerStreamingCall<LogsRequest, LogChunk> {
  return (call) => {
    let stopped = false;
    let headersSent = false;
    let stream: LocalLogStream | undefined;
    let forgetRevocation = (): void => undefined;
    call.on('cancelled', () => {
      stopped = true;
      forgetRevocation();
      stream?.stop();
    });
    const fail = (err: ApiError) => {
      if (!stopped) call.emit('error', toServiceError(err));
      stopped = true;
      forgetRevocation();
    };
    (async () => {
      rejectMalformed(call.request);
      const id = identityOf(call.metadata, tokens);
      // Deleting the token (or the node's credential) ends a followed log too.
      forgetRevocation = tokens.revocations.whenRevoked(id, () => {
        fail(revokedError(id, 'log stream'));
        stream?.stop();
      });
      const sink: LocalLogSink = {
        data(chunk, taken) {
          if (stopped) return taken();
          headersSent = true;
          call.write({ data: chunk }, () => taken());
        },
        end(err) {
          if (stopped) return;
          if (err) fail(err);
          else {
            stopped = true;
            forgetRevocation();
            call.end();
          }
        },
      };
      const opened = await api.logs(id, call.request, sink);
      stream = opened;
      if (stopped) opened.stop();
      // Headers tell the client the stream is open before the first byte (a quiet follow).
      else if (!headersSent) {
        headersSent = true;
        call.sendMetadata(new grpc.Metadata());
      }
    })().catch((err) => fail(toApiError(err, logger)));
  };
}

/**
 * Large list answers take turns at being sent. Handing a 14 MB answer to HTTP/2 costs tens of
 * milliseconds of CPU in one go (framing, TLS); four at once held every other client's calls
 * for up to a second. A turn ends when the answer has been handed to HTTP/2 (grpc-js then
 * sends the status), when the call ends, or after `turnMs` (a client that does not read must
 * not keep the turn), so other clients' small calls run between two large answers.
 */
import * as grpc from '@grpc/grpc-js';
import pLimit from 'p-limit';
import type { Clock } from '../../client/util/clock.js';

export const LIST_PATH = '/kubelab.v1.Resources/List';

export interface LargeListTurns {
  /** Answers of at least this many bytes take turns. */
  minBytes: number;
  /** Turns at once. */
  concurrency: number;
  turnMs: number;
  clock: Clock;
}

/** A server interceptor for the List method; every other call passes through untouched. */
export function largeListInterceptor(options: LargeListTurns): grpc.ServerInterceptor {
  const turns = pLimit(options.concurrency);
  return (method, call) => {
    if (method.path !== LIST_PATH) return new grpc.ServerInterceptingCall(call);
    let ended = false;
    let endTurn: (() => void) | undefined;
    const end = () => {
      ended = true;
      endTurn?.();
    };
    const listener = new grpc.ServerListenerBuilder().withOnCancel(end).build();
    const responder = new grpc.ResponderBuilder()
      .withStart((next) => next(listener))
      .withSendMessage((message: unknown, next) => {
        if (!Buffer.isBuffer(message) || message.length < options.minBytes) return next(message);
        turns(async () => {
          // A turn that ends hands over to the next one at once (p-limit runs it in a
          // microtask): give the calls that arrived meanwhile their go first.
          await new Promise((resolve) => setImmediate(resolve));
          await new Promise<void>((release) => {
            // A call cancelled while it waited has nothing left to send.
            if (ended) return release();
            const timer = options.clock.setTimeout(release, options.turnMs);
            endTurn = () => {
              options.clock.clearTimeout(timer);
              release();
            };
            next(message);
          });
        }).catch((err: Error) =>
          // Not expected (grpc-js reports a failed write as a status): end the call, keep serving.
          call.sendStatus({
            code: grpc.status.INTERNAL,
            details: `the list answer could not be sent (${err.message}); retry the list`,
            metadata: new grpc.Metadata(),
          }),
        );
      })
      .withSendStatus((status, next) => {
        next(status);
        end();
      })
      .build();
    return new grpc.ServerInterceptingCall(call, responder);
  };
}

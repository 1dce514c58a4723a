/**
 * The Resources service handlers: authenticate, translate the wire request, call the
 * apiserver, translate the answer. Every failure becomes a gRPC status with an actionable
 * message; nothing a client sends can throw past a handler.
 */
import * as grpc from '@grpc/grpc-js';
import { ApiError } from '../../client/api/errors.js';
import { resolveKind, toApiObject } from '../../client/api/kinds.js';
import type {
  ApiObject,
  BindRequest,
  DeleteRequest,
  GetRequest,
  KubeObject,
  ListRequest,
  PatchRequest,
  WatchRequest,
} from '../../client/api/types.js';
import { TurnBatcher } from '../../client/util/turnbatcher.js';
import type { Logger } from '../logging.js';
import { toApiError, type ApiServer } from '../apiserver/apiserver.js';
import { kindOf } from '../apiserver/requests.js';
import type { WatchSink } from '../apiserver/watchcache.js';
import type { TokenStore } from './tokens.js';
import { identityOf, rejectMalformed, unaryHandlers } from './handlers.js';
import type { IngressBrake } from './ingressbrake.js';
import { callsHandler } from './calls.js';
import { logsHandler } from './logs.js';
import { revokedError } from './revocations.js';
import {
  encodedObject,
  encodeList,
  encodeWatchBatch,
  encodeWatchEvent,
  serverDefinition,
  toServiceError,
} from './wire.js';
import { writeRequestOf, type WriteEnvelope } from './writeenvelope.js';

/**
 * A watch whose client stopped reading is ended once this much of its events (beyond its
 * initial events and replayed history, which are the answer it asked for) waits to be sent.
 */
const DEFAULT_WATCH_BUFFER_BYTES = 64 * 1024 * 1024;

/** A watch's batch goes out at the end of the turn, or once it holds 1,000 events or 1 MiB. */
const WATCH_BATCH = { maxItems: 1000, maxSize: 1024 * 1024, sizeOf: (b: Buffer) => b.length };

/** The answer to a unary call: the object's wire bytes (shared with watchers when cached). */
function objectOut(obj: KubeObject): Buffer {
  if (!resolveKind(obj.kind ?? ''))
    throw new ApiError('InternalError', `cannot send an object of kind ${obj.kind}`);
  return encodedObject(obj);
}

export function resourcesHandlers(
  api: ApiServer,
  tokens: TokenStore,
  logger: Logger,
  watchBufferBytes = DEFAULT_WATCH_BUFFER_BYTES,
  brake?: IngressBrake,
  closing?: AbortSignal,
): grpc.UntypedServiceImplementation {
  const unary = unaryHandlers(tokens, logger, api.flowControl, brake).authenticated;

  const watch: grpc.handleServerStreamingCall<WatchRequest, Buffer> = (call) => {
    let stopped = false;
    let stop: (() => void) | undefined;
    let forgetRevocation = (): void => undefined;
    call.on('cancelled', () => {
      stopped = true;
      forgetRevocation();
      stop?.();
    });
    /** Sends what a batch still holds, before the call ends. */
    let flushPending = (): void => undefined;
    const fail = (err: ApiError) => {
      if (!stopped) {
        flushPending();
        call.emit('error', toServiceError(err));
      }
      stopped = true;
      forgetRevocation();
    };
    (async () => {
      rejectMalformed(call.request);
      const id = identityOf(call.metadata, tokens);
      // Deleting the token (or the node's credential) ends the watch, not only the next call.
      forgetRevocation = tokens.revocations.whenRevoked(id, () => {
        // The status first: stopping the watch would otherwise end the call as if normally.
        fail(revokedError(id, 'watch'));
        stop?.();
      });
      const req = call.request;
      const info = kindOf(req.kind);
      // Bytes of events written and not yet sent (the call counts messages, not bytes). Until
      // the watch is established, what is written is its initial events or its replay: the
      // answer it asked for, however large, not counted.
      let established = false;
      let queuedBytes = 0;
      const write = (bytes: Buffer) => {
        // A batch's turn may come after the client went away.
        if (stopped) return;
        if (!established) return void call.write(bytes);
        queuedBytes += bytes.length;
        call.write(bytes, () => (queuedBytes -= bytes.length));
      };
      // grpc-js sends a stream's messages a couple per turn of the event loop, so a watcher
      // that gets one message per event falls behind a busy server. Events ready in the same
      // turn go out together to a client that reads batches.
      const batch = req.allowBatches
        ? new TurnBatcher<Buffer>((events) => write(encodeWatchBatch(events)), WATCH_BATCH)
        : undefined;
      const send = (bytes: Buffer) => (batch ? batch.add(bytes) : write(bytes));
      flushPending = () => batch?.flush();
      const sink: WatchSink = {
        event(type, entry) {
          if (stopped) return false;
          if (queuedBytes > watchBufferBytes) return false;
          send(encodeWatchEvent({ type, entry }));
          return true;
        },
        bookmark(rv, initialEventsEnd) {
          if (stopped) return;
          send(
            encodeWatchEvent({
              type: 'BOOKMARK',
              kind: info.kind,
              apiVersion: info.apiVersion,
              resourceVersion: String(rv),
              initialEventsEnd,
            }),
          );
        },
        end(err) {
          if (stopped) return;
          if (err) fail(err);
          else {
            flushPending();
            stopped = true;
            forgetRevocation();
            call.end();
          }
        },
      };
      const handle = await api.watchCached(id, req, sink);
      established = true;
      stop = () => handle.stop();
      if (stopped) handle.stop();
      // Headers now tell the client the watch is established even before the first event.
      else call.sendMetadata(new grpc.Metadata());
    })().catch((err) => fail(toApiError(err, logger)));
  };

  const handlers = {
    get: unary<GetRequest, Buffer>(async (id, req) => objectOut(await api.get(id, req))),
    list: unary<ListRequest, Buffer>(async (id, req) => encodeList(await api.listCached(id, req))),
    watch,
    create: unary<WriteEnvelope, Buffer>(async (id, req) =>
      objectOut(await api.create(id, writeRequestOf(api, id, 'create', req))),
    ),
    update: unary<WriteEnvelope, Buffer>(async (id, req) =>
      objectOut(await api.update(id, writeRequestOf(api, id, 'update', req))),
    ),
    updateStatus: unary<WriteEnvelope, Buffer>(async (id, req) =>
      objectOut(await api.updateStatus(id, writeRequestOf(api, id, 'update', req, 'status'))),
    ),
    patch: unary<PatchRequest, Buffer>(async (id, req) => objectOut(await api.patch(id, req))),
    bind: unary<BindRequest, Buffer>(async (id, req) => objectOut(await api.bind(id, req))),
    logs: logsHandler(api, tokens, logger),
    delete: unary<DeleteRequest, { object: ApiObject; deleted: boolean }>(async (id, req) => {
      const res = await api.delete(id, req);
      return { object: toApiObject(kindOf(res.object.kind), res.object), deleted: res.deleted };
    }),
  };
  return {
    ...handlers,
    calls: callsHandler({ handlers, definition: serverDefinition(), tokens, logger, closing }),
  } as unknown as grpc.UntypedServiceImplementation;
}

/**
 * `?watch=1`: newline-delimited JSON events, as Kubernetes streams them. Errors before the
 * first event are an HTTP error with a Status; later ones an ERROR event carrying the Status
 * (a 410 for a resourceVersion that is gone), then the end of the stream. A client that stops
 * reading is dropped once too much waits for it; revoking its token ends the stream.
 */
import type { KindInfo } from '../../client/api/kinds.js';
import type { Identity } from '../../client/api/local.js';
import type { WatchRequest } from '../../client/api/types.js';
import { toApiError, type ApiServer } from '../apiserver/apiserver.js';
import type { CachedObject, WatchSink } from '../apiserver/watchcache.js';
import type { Clock } from '../../client/util/clock.js';
import { tableOf, type TableRequest } from './table.js';
import { revokedError } from '../grpc/revocations.js';
import type { TokenStore } from '../grpc/tokens.js';
import type { Logger } from '../logging.js';
import { jsonOfEntry, watchEventChunks } from './encoding.js';
import { NO_CACHE } from './response.js';
import type { RestRequestMessage, RestResponse } from './handler.js';
import { statusOf } from './status.js';

/** As the gRPC door: events a stalled client may leave unsent before its watch is ended. */
const DEFAULT_WATCH_BUFFER_BYTES = 64 * 1024 * 1024;

/** The annotation on the bookmark that ends the initial events (sendInitialEvents). */
const INITIAL_EVENTS_END = 'k8s.io/initial-events-end';

export async function serveWatch(
  api: ApiServer,
  tokens: TokenStore,
  id: Identity,
  info: KindInfo,
  _req: RestRequestMessage,
  res: RestResponse,
  request: WatchRequest,
  options: { bufferBytes?: number; logger?: Logger; table?: TableRequest; clock: Clock },
): Promise<void> {
  const bufferBytes = options.bufferBytes ?? DEFAULT_WATCH_BUFFER_BYTES;
  const { logger, table, clock } = options;
  // As Tables, the columns come with the first event only (kubectl prints them once).
  let tableHeaders = true;
  const objectJson = (entry: CachedObject): Buffer => {
    if (!table) return jsonOfEntry(entry);
    const t = tableOf(info, [entry.object], table, clock.now(), { headers: tableHeaders });
    tableHeaders = false;
    return Buffer.from(JSON.stringify(t));
  };
  let stopped = false;
  let queuedBytes = 0;
  let established = false;
  let stop: (() => void) | undefined;
  let forgetRevocation = (): void => undefined;

  const open = () => {
    if (res.headersSent) return;
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': NO_CACHE });
    // HTTP/1.1 would hold them until the first event (HTTP/2 sends them with writeHead).
    if ('flushHeaders' in res) res.flushHeaders();
  };
  // HTTP/1.1's and HTTP/2's responses write alike.
  const out = res as unknown as {
    write(chunk: Buffer, callback?: () => void): boolean;
    cork?(): void;
    uncork?(): void;
  };
  /** Writes one event's chunks together (one TLS record, one system call where the socket allows). */
  const write = (chunks: Buffer[]) => {
    open();
    // The initial events are the answer asked for, however large; after them, what waits counts.
    const bytes = established ? chunks.reduce((n, c) => n + c.length, 0) : 0;
    queuedBytes += bytes;
    out.cork?.();
    for (let i = 0; i < chunks.length - 1; i++) out.write(chunks[i]);
    out.write(chunks[chunks.length - 1], bytes ? () => (queuedBytes -= bytes) : undefined);
    out.uncork?.();
  };
  const finish = () => {
    if (stopped) return;
    stopped = true;
    forgetRevocation();
    open();
    res.end();
  };
  const fail = (err: ReturnType<typeof toApiError>) => {
    if (stopped) return;
    if (!res.headersSent) {
      stopped = true;
      forgetRevocation();
      const status = statusOf(err);
      res.writeHead(status.code, { 'content-type': 'application/json' });
      res.end(JSON.stringify(status));
      return;
    }
    write(watchEventChunks('ERROR', Buffer.from(JSON.stringify(statusOf(err)))));
    finish();
  };

  res.on('close', () => {
    stopped = true;
    forgetRevocation();
    stop?.();
  });
  forgetRevocation = tokens.revocations.whenRevoked(id, () => {
    fail(revokedError(id, 'watch'));
    stop?.();
  });

  const sink: WatchSink = {
    event(type, entry) {
      if (stopped || queuedBytes > bufferBytes) return false;
      write(watchEventChunks(type, objectJson(entry)));
      return true;
    },
    bookmark(rv, initialEventsEnd) {
      if (stopped) return;
      const metadata: Record<string, unknown> = { resourceVersion: String(rv) };
      if (initialEventsEnd) metadata.annotations = { [INITIAL_EVENTS_END]: 'true' };
      write(
        watchEventChunks(
          'BOOKMARK',
          Buffer.from(JSON.stringify({ kind: info.kind, apiVersion: info.apiVersion, metadata })),
        ),
      );
    },
    end(err) {
      if (err) fail(err);
      else finish();
    },
  };
  try {
    const handle = await api.watchCached(id, request, sink);
    established = true;
    stop = () => handle.stop();
    if (stopped) handle.stop();
    // The headers tell the client the watch is established even before the first event.
    else open();
  } catch (err) {
    fail(toApiError(err, logger));
  }
}

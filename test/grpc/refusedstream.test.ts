/**
 * A call the server's HTTP/2 turns away before any of its code runs (REFUSED_STREAM, or Node's
 * ENHANCE_YOUR_CALM for a stream it has no room for) was provably not processed: the typed client
 * reports it as a refusal (TooManyRequests), not as an unreachable server, and sends even a
 * write that could not otherwise be repeated again.
 */
import { once } from 'node:events';
import { constants, createSecureServer, type Http2SecureServer } from 'node:http2';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../client/api/errors.js';
import { grpcClient } from '../../client/grpc/transport.js';
import { ensurePki } from '../../main/grpc/pki.js';

const closers: Array<() => void> = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
});

/** A TLS HTTP/2 server that resets the first `resets` streams with `code`, and counts them all. */
async function refusingServer(code: number, resets: number) {
  const dir = mkdtempSync(join(tmpdir(), 'kubelab-refused-'));
  const pki = await ensurePki(dir);
  const h2: Http2SecureServer = createSecureServer({ key: pki.keyPem, cert: pki.certPem, allowHTTP1: false });
  const seen = { streams: 0 };
  h2.on('stream', (stream) => {
    stream.on('error', () => undefined);
    if (seen.streams++ < resets) return void stream.close(code);
    // Past the refusals, a gRPC answer with a status of its own: the call did reach a server.
    stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
    stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '5', 'grpc-message': 'not here' }));
    stream.end();
  });
  h2.listen(0, '127.0.0.1');
  await once(h2, 'listening');
  closers.push(() => {
    h2.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { server: `127.0.0.1:${(h2.address() as AddressInfo).port}`, caPem: pki.caPem, seen };
}

const configMap = {
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { generateName: 'c-', namespace: 'default' },
};

describe('a call refused by HTTP/2 before the server saw it', () => {
  it('is a refusal the caller may send again, not an unreachable server', async () => {
    const s = await refusingServer(constants.NGHTTP2_REFUSED_STREAM, Infinity);
    const client = grpcClient({ server: s.server, caPem: s.caPem, token: 't', retry: { attempts: 1 } });
    closers.push(() => client.close());
    const err = await client.create(configMap).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).reason).toBe('TooManyRequests');
    expect((err as ApiError).message).toMatch(
      /refused the call before processing it .*REFUSED_STREAM.*send it again/,
    );
  });

  it('is sent again by the typed client even when it is a generateName create', async () => {
    // grpc-js resends a refused stream once by itself; the typed client's retries do the rest.
    const s = await refusingServer(constants.NGHTTP2_REFUSED_STREAM, 4);
    const client = grpcClient({
      server: s.server,
      caPem: s.caPem,
      token: 't',
      retry: { attempts: 5, initialDelayMs: 1, sleep: () => Promise.resolve() },
    });
    closers.push(() => client.close());
    const err = await client.create(configMap).catch((e: unknown) => e);
    // The fifth stream reached the "server", whose answer is the call's outcome.
    expect((err as ApiError).reason).toBe('NotFound');
    expect(s.seen.streams).toBe(5);
  });

  it("reports Node's ENHANCE_YOUR_CALM for a stream as a refusal too, not as a message too large", async () => {
    const s = await refusingServer(constants.NGHTTP2_ENHANCE_YOUR_CALM, Infinity);
    const client = grpcClient({ server: s.server, caPem: s.caPem, token: 't', retry: { attempts: 1 } });
    closers.push(() => client.close());
    const err = await client.create(configMap).catch((e: unknown) => e);
    expect((err as ApiError).reason).toBe('TooManyRequests');
    expect((err as ApiError).message).toMatch(/ENHANCE_YOUR_CALM/);
  });
});

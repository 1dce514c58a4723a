/**
 * Resources.Calls over real TLS: an agent's client sends its writes and gets as messages on one
 * stream and gets exactly what unary calls give (answers, and the same ApiErrors, node
 * restriction included); a bad call is answered without ending the stream; a revoked token
 * ends it; a server without Calls gets unary calls instead.
 */
import * as grpc from '@grpc/grpc-js';
import http2 from 'node:http2';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../../client/api/errors.js';
import { fromApiObject, resolveKind, toApiObject } from '../../client/api/kinds.js';
import type { Lease, Node } from '../../client/api/types.js';
import type { Client } from '../../client/client.js';
import { joinCluster, TokensClient } from '../../client/grpc/cluster.js';
import { grpcClient } from '../../client/grpc/transport.js';
import {
  ApiObject,
  CallRequest,
  CallResult,
  GetRequest,
  ResourcesService,
} from '../../proto/gen/kubelab/v1/api.js';
import { startTestControlPlane, type TestControlPlane } from '../support/controlplane.js';

const lease = (name: string): Lease => ({
  apiVersion: 'coordination.k8s.io/v1',
  kind: 'Lease',
  metadata: { name, namespace: 'kube-node-lease' },
  spec: { holderIdentity: name, leaseDurationSeconds: 40 },
});

/** The prototype of Node's client HTTP/2 sessions, whose request() opens every gRPC call. */
function clientSessionPrototype(): { request: (...args: unknown[]) => unknown } {
  const probe = http2.connect('http://127.0.0.1:9');
  probe.on('error', () => undefined);
  probe.destroy();
  return Object.getPrototypeOf(probe) as { request: (...args: unknown[]) => unknown };
}

/** What a call threw, for comparing the two paths. */
async function failureOf(p: Promise<unknown>): Promise<{ reason: string; code: number; message: string }> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    const e = err as ApiError;
    return { reason: e.reason, code: e.code, message: e.message };
  }
  throw new Error('the call succeeded');
}

describe('Resources.Calls', () => {
  let t: TestControlPlane;
  let server: string;
  let tokens: TokensClient;
  let nodeToken: string;

  beforeAll(async () => {
    t = await startTestControlPlane({ controllers: false });
    server = `127.0.0.1:${t.cp.port}`;
    tokens = new TokensClient({ server, token: t.cp.adminToken, caPem: t.caPem });
    for (const name of ['lab-1', 'lab-2']) {
      const joined = await joinCluster(server, (await tokens.create()).token!, name);
      if (name === 'lab-1') nodeToken = joined.token;
      const c = t.client({ token: joined.token });
      await c.create<Node>({ apiVersion: 'v1', kind: 'Node', metadata: { name } });
      await c.create(lease(name));
    }
  });
  afterAll(async () => {
    tokens.close();
    await t.close();
  });

  it('carries a node’s writes on one stream, with the answers and errors unary calls give', async () => {
    const unary = t.client({ token: nodeToken, retry: { attempts: 1 } });
    const streamed = t.client({ token: nodeToken, retry: { attempts: 1 }, callStream: true });
    let current = await unary.get('Lease', 'lab-1', { namespace: 'kube-node-lease' });
    // Every gRPC call is an HTTP/2 request of the client's session: count them by path.
    const requests = vi.spyOn(clientSessionPrototype(), 'request');
    try {
      current = await streamed.get('Lease', 'lab-1', { namespace: 'kube-node-lease' });
      for (let i = 0; i < 20; i++) {
        current = await streamed.update<Lease>({
          ...current,
          spec: { ...current.spec, renewTime: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString() },
        });
      }
      expect(current.spec?.renewTime).toBe('2026-01-01T00:00:19.000Z');
      const paths = requests.mock.calls.map(([headers]) => (headers as Record<string, string>)[':path']);
      expect(paths).toEqual(['/kubelab.v1.Resources/Calls']);
    } finally {
      requests.mockRestore();
    }
    expect((await unary.get('Lease', 'lab-1', { namespace: 'kube-node-lease' })).spec?.renewTime).toBe(
      '2026-01-01T00:00:19.000Z',
    );

    // The same failures, word for word: a stale write, another node's Lease, a missing object.
    const stale = { ...current, metadata: { ...current.metadata, resourceVersion: '1' } };
    for (const [what, call] of [
      ['a stale resourceVersion', (c: Client) => c.update(stale)],
      [
        "another node's Lease",
        (c: Client) => c.update({ ...lease('lab-2'), spec: { holderIdentity: 'lab-1' } }),
      ],
      ['a missing object', (c: Client) => c.get('Lease', 'nope', { namespace: 'kube-node-lease' })],
    ] as const) {
      const viaStream = await failureOf(call(streamed));
      expect(viaStream, what).toEqual(await failureOf(call(unary)));
    }
    expect((await failureOf(streamed.update(stale))).reason).toBe('Conflict');
    // A list is a call of its own (its answer may be large); it works all the same.
    const own = await streamed.list('Lease', {
      namespace: 'kube-node-lease',
      fieldSelector: 'metadata.name=lab-1',
    });
    expect(own.items.map((l) => l.metadata?.name)).toEqual(['lab-1']);
  });

  it('answers a bad call on the stream and goes on', async () => {
    const raw = new grpc.Client(server, grpc.credentials.createSsl(Buffer.from(t.caPem)), {
      'grpc.ssl_target_name_override': 'localhost',
    });
    try {
      const md = new grpc.Metadata();
      md.set('authorization', `Bearer ${t.cp.adminToken}`);
      const stream = raw.makeBidiStreamRequest(
        '/kubelab.v1.Resources/Calls',
        (m: CallRequest) => Buffer.from(CallRequest.encode(m).finish()),
        (b: Buffer) => CallResult.decode(b),
        md,
      );
      const results = new Map<number, CallResult>();
      const waiters: Array<() => void> = [];
      stream.on('data', (r: CallResult) => {
        results.set(r.id!, r);
        for (const w of waiters.splice(0)) w();
      });
      stream.on('error', () => undefined);
      const resultOf = async (id: number): Promise<CallResult> => {
        while (!results.has(id)) await new Promise<void>((r) => waiters.push(r));
        return results.get(id)!;
      };
      const get = (name: string) =>
        Buffer.from(GetRequest.encode({ kind: 'Namespace', name, namespace: '' }).finish());

      stream.write({ id: 1, method: 'Watch'.repeat(100), request: get('default') });
      const unknown = await resultOf(1);
      expect(unknown.code).toBe(grpc.status.INVALID_ARGUMENT);
      expect(unknown.message).toContain('is not a method a Calls stream carries; send one of Get, Create');
      expect(unknown.message!.length).toBeLessThan(300); // the name it was sent is not echoed whole

      stream.write({ id: 2, method: 'Get', request: Buffer.from([0xff, 0xff, 0xff]) });
      const malformed = await resultOf(2);
      expect(malformed.code).toBe(grpc.status.INVALID_ARGUMENT);
      expect(malformed.message).toContain('not a valid protobuf message');

      stream.write({ id: 3, method: 'Get', request: get('default') });
      const ok = await resultOf(3);
      expect(ok.code ?? 0).toBe(0);
      expect(fromApiObject(ApiObject.decode(ok.response!))?.object.metadata?.name).toBe('default');

      stream.end();
    } finally {
      raw.close();
    }
  });

  it('a revoked token ends the stream; the next call fails as a unary call would', async () => {
    const created = await tokens.create({ name: 'short-lived', role: 'admin' });
    const client = t.client({ token: created.token!, retry: { attempts: 1 }, callStream: true });
    await client.get('Namespace', 'default');
    const open = t.cp.tokens.revocations.waiting;
    await tokens.delete(created.id!);
    // The stream it opened is no longer waiting on the token: it ended.
    expect(t.cp.tokens.revocations.waiting).toBe(open - 1);
    const failure = await failureOf(client.get('Namespace', 'default'));
    expect(failure.reason).toBe('Unauthorized');
  });
});

describe('against a server without Calls', () => {
  let server: grpc.Server;
  let port: number;
  beforeAll(async () => {
    server = new grpc.Server();
    const definition = Object.fromEntries(
      Object.entries(ResourcesService).filter(([key]) => key !== 'calls'),
    ) as unknown as grpc.ServiceDefinition;
    server.addService(definition, {
      get: (call: grpc.ServerUnaryCall<GetRequest, ApiObject>, cb: grpc.sendUnaryData<ApiObject>) =>
        cb(
          null,
          toApiObject(resolveKind('Namespace')!, {
            apiVersion: 'v1',
            kind: 'Namespace',
            metadata: { name: call.request.name },
          }),
        ),
    });
    port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) =>
        err ? reject(err) : resolve(p),
      ),
    );
  });
  afterAll(() => server.forceShutdown());

  it('sends the calls as unary calls instead', async () => {
    const client = grpcClient({
      server: `127.0.0.1:${port}`,
      token: 'any',
      plaintext: true,
      callStream: true,
      retry: { attempts: 1 },
    });
    try {
      const [a, b] = await Promise.all([client.get('Namespace', 'first'), client.get('Namespace', 'second')]);
      expect([a.metadata?.name, b.metadata?.name]).toEqual(['first', 'second']);
      expect((await client.get('Namespace', 'third')).metadata?.name).toBe('third');
    } finally {
      client.close();
    }
  });
});

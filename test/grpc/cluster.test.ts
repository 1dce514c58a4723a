/**
 * Joining machines and managing tokens over gRPC, as `kubelab token` and `kubelab-agent` do.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../client/api/errors.js';
import type { Node } from '../../client/api/types.js';
import {
  fetchClusterCA,
  joinCluster,
  MetricsClient,
  parseJoinToken,
  TokensClient,
} from '../../client/grpc/cluster.js';
import { grpcClient } from '../../client/grpc/transport.js';
import { caHashOf } from '../../client/util/tls.js';
import { startTestControlPlane, type TestControlPlane } from '../support/controlplane.js';

let t: TestControlPlane;
let server: string;
let tokens: TokensClient;

beforeAll(async () => {
  t = await startTestControlPlane();
  server = `127.0.0.1:${t.cp.port}`;
  tokens = new TokensClient({ server, token: t.cp.adminToken, caPem: t.caPem });
});
afterAll(async () => {
  tokens.close();
  await t.close();
});

async function failure(p: Promise<unknown>): Promise<ApiError> {
  try {
    await p;
  } catch (err) {
    return err as ApiError;
  }
  throw new Error('expected a failure');
}

const nodeObject = (name: string): Node => ({ apiVersion: 'v1', kind: 'Node', metadata: { name } });

describe('tokens', () => {
  it('creates join tokens that pin the CA, lists them without secrets, deletes them', async () => {
    const created = await tokens.create({ description: 'for the attic pi' });
    expect(created.role).toBe('join');
    expect(created.token).toMatch(/^K10[0-9a-f]{64}::[a-z0-9]{6}\.[a-z0-9]{32}$/);
    expect(parseJoinToken(created.token!).caHash).toBe(caHashOf(t.caPem));
    expect(Date.parse(created.expiresAt!) - Date.parse(created.createdAt)).toBe(24 * 3600 * 1000);
    const listed = (await tokens.list()).find((x) => x.id === created.id)!;
    expect(listed).toMatchObject({ role: 'join', description: 'for the attic pi' });
    expect(listed.token).toBeUndefined();
    await tokens.delete(created.id);
    expect((await tokens.list()).some((x) => x.id === created.id)).toBe(false);
    expect((await failure(tokens.delete(created.id))).reason).toBe('NotFound');
  });

  it('creates viewer tokens that can read but not write', async () => {
    const v = await tokens.create({ role: 'viewer', name: 'alice' });
    const viewer = grpcClient({ server, token: v.token!, caPem: t.caPem });
    expect((await viewer.list('Namespace')).items.length).toBeGreaterThan(0);
    expect(
      (await failure(viewer.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'x' } }))).code,
    ).toBe(7);
    const asViewer = new TokensClient({ server, token: v.token!, caPem: t.caPem });
    expect((await failure(asViewer.create())).code).toBe(7);
    asViewer.close();
    viewer.close();
    expect((await failure(tokens.create({ role: 'node' as 'join' }))).reason).toBe('BadRequest');
  });
});

describe('joining', () => {
  it('fetches the CA without credentials', async () => {
    expect(await fetchClusterCA(server)).toBe(t.caPem);
  });

  it('joins with a join token and acts only as its node', async () => {
    const { token: join } = await tokens.create();
    const res = await joinCluster(server, join!, 'pi-1');
    expect(res.caPem).toBe(t.caPem);
    expect(res.nodeName).toBe('pi-1');
    const asNode = grpcClient({ server, token: res.token, caPem: res.caPem });
    expect((await asNode.create(nodeObject('pi-1'))).metadata?.name).toBe('pi-1');
    expect((await failure(asNode.create(nodeObject('pi-2')))).code).toBe(7);
    asNode.close();
  });

  it('refuses a server whose CA is not the one the token pins, before sending the secret', async () => {
    const { token: join } = await tokens.create();
    const forged = join!.replace(/^K10[0-9a-f]{8}/, 'K10deadbeef');
    const err = await failure(joinCluster(server, forged, 'pi-9'));
    expect(err.reason).toBe('Unauthorized');
    expect(err.message).toContain('does not match the join token');
    // The secret was never used: the token still works.
    await joinCluster(server, join!, 'pi-9');
  });

  it('refuses expired, deleted and malformed tokens with a message that says what to do', async () => {
    const short = await tokens.create({ ttlSeconds: 1 });
    await new Promise((r) => setTimeout(r, 1100));
    expect((await failure(joinCluster(server, short.token!, 'late'))).message).toContain(
      'kubelab token create',
    );
    const deleted = await tokens.create();
    await tokens.delete(deleted.id);
    expect((await failure(joinCluster(server, deleted.token!, 'gone'))).reason).toBe('Unauthorized');
    expect((await failure(joinCluster(server, 'K10abc::nope', 'bad'))).message).toContain('malformed');
    const { token: join } = await tokens.create();
    expect((await failure(joinCluster(server, join!, 'Not_A_Name'))).message).toContain('node name');
  });

  it('revokes the credential when the Node is deleted', async () => {
    const { token: join } = await tokens.create();
    const res = await joinCluster(server, join!, 'pi-doomed');
    const asNode = grpcClient({ server, token: res.token, caPem: res.caPem, retry: { attempts: 1 } });
    await asNode.create(nodeObject('pi-doomed'));
    await t.cp.client().delete('Node', 'pi-doomed');
    let err: ApiError | undefined;
    for (let i = 0; i < 50 && !err; i++) {
      err = await asNode.get('Node', 'pi-doomed').then(
        () => undefined,
        (e: ApiError) => (e.reason === 'Unauthorized' ? e : undefined),
      );
      if (!err) await new Promise((r) => setTimeout(r, 20));
    }
    expect(err?.code).toBe(16);
    asNode.close();
  });

  it('rejects Join without a join token', async () => {
    const { token: join } = await tokens.create();
    const bearer = parseJoinToken(join!).bearer;
    expect(bearer).toMatch(/\./);
    const asAdmin = await failure(
      (async () => {
        const { Connection } = await import('../../client/grpc/connection.js');
        const { BootstrapService } = await import('../../proto/gen/kubelab/v1/cluster.js');
        const c = new Connection(
          { server, token: t.cp.adminToken, caPem: t.caPem },
          BootstrapService as never,
          'kubelab.v1.Bootstrap',
        );
        try {
          await c.unary('join', { nodeName: 'x' });
        } finally {
          c.close();
        }
      })(),
    );
    expect(asAdmin.code).toBe(7);
  });
});

describe('joining under a name that is taken', () => {
  const first = 'a'.repeat(43);
  const other = 'b'.repeat(43);

  /** A client with a node credential that gives up at once (a refusal shows as itself). */
  const asNode = (token: string) => grpcClient({ server, token, caPem: t.caPem, retry: { attempts: 1 } });

  async function joinToken(): Promise<string> {
    return (await tokens.create()).token!;
  }

  it('refuses another machine (another or no node password), and the live node keeps working', async () => {
    const live = await joinCluster(server, await joinToken(), 'twin', { nodePassword: first });
    const liveNode = asNode(live.token);
    await liveNode.create(nodeObject('twin'));

    for (const nodePassword of [other, '']) {
      const err = await failure(joinCluster(server, await joinToken(), 'twin', { nodePassword }));
      expect(err.code).toBe(6); // ALREADY_EXISTS
      expect(err.message).toContain('node "twin" is already joined by another machine');
      expect(err.message).toContain('labctl delete node twin');
      expect(err.message).toContain('--node-name');
      expect(err.message).toContain('--force');
    }
    expect((await liveNode.get('Node', 'twin')).metadata?.name).toBe('twin');
    liveNode.close();
  });

  it('lets the same machine join again (same node password): the new credential replaces the old', async () => {
    const before = await joinCluster(server, await joinToken(), 'same-machine', { nodePassword: first });
    const again = await joinCluster(server, await joinToken(), 'same-machine', { nodePassword: first });
    const oldCred = asNode(before.token);
    const newCred = asNode(again.token);
    expect((await newCred.create(nodeObject('same-machine'))).metadata?.name).toBe('same-machine');
    expect((await failure(oldCred.get('Node', 'same-machine'))).code).toBe(16);
    oldCred.close();
    newCred.close();
  });

  it('lets anyone take a name whose credential is gone: the Node deleted, or the credential deleted', async () => {
    const gone = await joinCluster(server, await joinToken(), 'replaced', { nodePassword: first });
    const goneNode = asNode(gone.token);
    await goneNode.create(nodeObject('replaced'));
    await t.cp.client().delete('Node', 'replaced');
    // The Node's deletion revokes its credential (asynchronously, through a watch).
    for (let i = 0; i < 250; i++) {
      if (!(await tokens.list()).some((x) => x.nodeName === 'replaced')) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const newMachine = await joinCluster(server, await joinToken(), 'replaced', { nodePassword: other });
    expect(newMachine.nodeName).toBe('replaced');
    goneNode.close();

    const credential = (await tokens.list()).find((x) => x.nodeName === 'replaced')!;
    await tokens.delete(credential.id);
    const third = await joinCluster(server, await joinToken(), 'replaced', { nodePassword: first });
    expect(third.nodeName).toBe('replaced');
  });

  it('lets a forced join take the name over, revoking the live credential', async () => {
    const live = await joinCluster(server, await joinToken(), 'taken-over', { nodePassword: first });
    const forced = await joinCluster(server, await joinToken(), 'taken-over', {
      nodePassword: other,
      force: true,
    });
    const oldCred = asNode(live.token);
    const newCred = asNode(forced.token);
    expect((await newCred.create(nodeObject('taken-over'))).metadata?.name).toBe('taken-over');
    expect((await failure(oldCred.get('Node', 'taken-over'))).code).toBe(16);
    // From now on the forcing machine's password is the one that counts.
    await joinCluster(server, await joinToken(), 'taken-over', { nodePassword: other });
    expect(
      (await failure(joinCluster(server, await joinToken(), 'taken-over', { nodePassword: first }))).code,
    ).toBe(6);
    oldCred.close();
    newCred.close();
  });
});

describe('node metrics', () => {
  it('keeps the recent samples of a node in memory, listable, watchable and with history', async () => {
    const admin = t.client();
    const m = await admin.create({
      apiVersion: 'metrics.k8s.io/v1beta1',
      kind: 'NodeMetrics',
      metadata: { name: 'pi-1' },
      timestamp: '2026-11-29T10:00:00Z',
      window: '10s',
      usage: { cpu: '100m', memory: '1Gi' },
    });
    const w = await admin.watch('NodeMetrics', { resourceVersion: m.metadata!.resourceVersion });
    await admin.update({ ...m, timestamp: '2026-11-29T10:00:10Z', usage: { cpu: '300m', memory: '1Gi' } });
    const it = w[Symbol.asyncIterator]();
    expect((await it.next()).value.object.usage.cpu).toBe('300m');
    w.stop();
    expect((await admin.list('NodeMetrics')).items.map((x) => x.metadata?.name)).toEqual(['pi-1']);
    const history = new MetricsClient({ server, token: t.cp.adminToken, caPem: t.caPem });
    expect((await history.nodeHistory('pi-1')).map((s) => s.usage?.cpu)).toEqual(['100m', '300m']);
    expect((await failure(history.nodeHistory('nobody'))).reason).toBe('NotFound');
    history.close();
  });
});

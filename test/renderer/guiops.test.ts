/**
 * The GUI's own bridge ops against a real control plane, as the Settings view and the node
 * page use them: how the server runs (paths only for admins), where agents should dial and a
 * join token for the Add node view, tokens for admins (made with a
 * lifetime, listed without secrets, deleted so they stop working), a kubeconfig with a token
 * of its own, a node's recent samples;
 * viewers are refused token management and bad requests are answered, not thrown.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NodeMetrics } from '../../client/api/types.js';
import type {
  BridgeCreatedToken,
  BridgeInfo,
  BridgeJoinToken,
  BridgeKubeconfig,
  BridgeToken,
} from '../../client/bridge/protocol.js';
import { parse } from 'yaml';
import type { BridgeClient } from '../../renderer/src/bridge/client.js';
import { startTestControlPlane, type TestControlPlane } from '../support/controlplane.js';
import { loopbackBridge, rejection } from './loopback.js';

let t: TestControlPlane;
let admin: BridgeClient;
let viewer: BridgeClient;

beforeAll(async () => {
  t = await startTestControlPlane({ controllers: false });
  ({ bridge: admin } = loopbackBridge(t));
  ({ bridge: viewer } = loopbackBridge(t, { name: 'alice', role: 'viewer' }));
});
afterAll(() => t.close());

describe('info', () => {
  it('tells an admin the store, data folder, addresses and file paths', async () => {
    const info = await admin.request<BridgeInfo>({ op: 'info' });
    expect(info).toMatchObject({
      user: 'admin',
      role: 'admin',
      store: 'sqlite',
      dataDir: t.dataDir,
      listen: `127.0.0.1:${t.cp.port}`,
      tls: true,
      caPath: t.cp.pki!.caPath,
      adminTokenPath: t.cp.tokens.adminTokenPath,
      // On loopback only: agents on other machines cannot reach it (the Add node view warns).
      agents: { url: `https://127.0.0.1:${t.cp.port}`, reachable: false },
    });
  });

  it('tells a viewer how to reach the server, but not where its files are', async () => {
    const info = await viewer.request<BridgeInfo>({ op: 'info' });
    expect(info).toMatchObject({
      user: 'alice',
      role: 'viewer',
      store: 'sqlite',
      listen: `127.0.0.1:${t.cp.port}`,
    });
    expect(info.dataDir).toBeUndefined();
    expect(info.caPath).toBeUndefined();
    expect(info.adminTokenPath).toBeUndefined();
  });
});

describe('joinToken', () => {
  it('offers the address the server listens on, not a LAN address it does not answer on', async () => {
    const join = await admin.request<BridgeJoinToken>({ op: 'joinToken' });
    expect(join.server).toBe(`https://127.0.0.1:${t.cp.port}`);
    expect(join.token).toMatch(/^K10[0-9a-f]{64}::/);
  });
});

describe('tokens', () => {
  it('creates a token with a lifetime, lists it without its secret, and deletes it', async () => {
    const before = Date.now();
    const created = await admin.request<BridgeCreatedToken>({
      op: 'createToken',
      role: 'viewer',
      name: 'bob',
      description: 'for the dashboard',
      ttlSeconds: 7200,
    });
    expect(t.cp.tokens.authenticate(created.token)).toEqual({
      name: 'bob',
      role: 'viewer',
      tokenId: created.id,
    });
    const expires = Date.parse(created.expiresAt!);
    expect(expires).toBeGreaterThanOrEqual(before + 7200_000 - 1000);
    expect(expires).toBeLessThanOrEqual(Date.now() + 7200_000);

    const listed = await admin.request<BridgeToken[]>({ op: 'listTokens' });
    const entry = listed.find((x) => x.id === created.id);
    expect(entry).toEqual({
      id: created.id,
      role: 'viewer',
      name: 'bob',
      description: 'for the dashboard',
      createdAt: created.createdAt,
      expiresAt: created.expiresAt,
    });
    expect(JSON.stringify(listed)).not.toContain(created.token.split('.')[1]);

    await admin.request({ op: 'deleteToken', tokenId: created.id });
    expect(t.cp.tokens.authenticate(created.token)).toBeUndefined();
    expect((await rejection(admin.request({ op: 'deleteToken', tokenId: created.id }))).reason).toBe(
      'NotFound',
    );
  });

  it('makes join tokens that pin the CA and last 24 hours unless told otherwise', async () => {
    const join = await admin.request<BridgeCreatedToken>({ op: 'createToken', role: 'join' });
    expect(join.token).toMatch(new RegExp(`^K10${t.cp.pki!.caHash}::[a-z0-9]{6}\\.[a-z0-9]{32}$`));
    expect(Date.parse(join.expiresAt!) - Date.parse(join.createdAt)).toBe(24 * 3600_000);
    const forever = await admin.request<BridgeCreatedToken>({
      op: 'createToken',
      role: 'admin',
      ttlSeconds: 0,
    });
    expect(forever.expiresAt).toBeUndefined();
    expect(forever.name).toBe(`admin-${forever.id}`);
  });

  it('refuses token management to a viewer', async () => {
    for (const req of [
      { op: 'listTokens' as const },
      { op: 'createToken' as const, role: 'admin' as const },
      { op: 'deleteToken' as const, tokenId: 'abcdef' },
      { op: 'kubeconfig' as const, role: 'viewer' as const },
    ]) {
      const err = await rejection(viewer.request(req));
      expect(err.reason).toBe('Forbidden');
      expect(err.message).toContain('needs the admin role');
    }
  });

  it('answers a malformed request with what is wrong', async () => {
    const role = await rejection(admin.request({ op: 'createToken', role: 'node' as never }));
    expect(role).toMatchObject({ reason: 'BadRequest', message: 'role: must be one of join, admin, viewer' });
    const ttl = await rejection(admin.request({ op: 'createToken', role: 'viewer', ttlSeconds: -5 }));
    expect(ttl.message).toMatch(/^ttlSeconds: a whole number of seconds/);
    const id = await rejection(admin.request({ op: 'deleteToken', tokenId: '' }));
    expect(id.message).toBe('tokenId: the id of the token to delete');
    const kubeconfigRole = await rejection(admin.request({ op: 'kubeconfig', role: 'node' as never }));
    expect(kubeconfigRole.message).toBe('role: must be admin or viewer');
  });

  it('makes a kubeconfig whose own token signs in with the role asked for', async () => {
    const made = await admin.request<BridgeKubeconfig>({ op: 'kubeconfig', role: 'viewer' });
    const config = parse(made.kubeconfig) as {
      clusters: Array<{ cluster: { server: string; 'certificate-authority-data': string } }>;
      users: Array<{ user: { token: string } }>;
    };
    expect(config.clusters[0].cluster.server).toBe(`https://127.0.0.1:${t.cp.port}`);
    expect(Buffer.from(config.clusters[0].cluster['certificate-authority-data'], 'base64').toString()).toBe(
      t.caPem,
    );
    const identity = t.cp.tokens.authenticate(config.users[0].user.token);
    expect(identity).toMatchObject({ role: 'viewer', tokenId: made.tokenId });
    const listed = await admin.request<BridgeToken[]>({ op: 'listTokens' });
    expect(listed.find((x) => x.id === made.tokenId)?.name).toBe('kubeconfig-kubelab');
  });
});

describe('nodeMetricsHistory', () => {
  it("returns a node's recent samples, oldest first, and NotFound before it sent any", async () => {
    expect((await rejection(admin.request({ op: 'nodeMetricsHistory', name: 'pi' }))).reason).toBe(
      'NotFound',
    );
    const client = t.cp.client();
    const sample = (cpu: string, at: string): NodeMetrics => ({
      apiVersion: 'metrics.k8s.io/v1beta1',
      kind: 'NodeMetrics',
      metadata: { name: 'pi' },
      timestamp: at,
      window: '10s',
      usage: { cpu, memory: '1Gi' },
    });
    const first = await client.create(sample('100m', '2026-05-01T10:00:00Z'));
    await client.update({ ...sample('300m', '2026-05-01T10:00:10Z'), metadata: first.metadata });
    const history = await viewer.request<NodeMetrics[]>({ op: 'nodeMetricsHistory', name: 'pi' });
    expect(history.map((m) => [m.timestamp, m.usage?.cpu])).toEqual([
      ['2026-05-01T10:00:00Z', '100m'],
      ['2026-05-01T10:00:10Z', '300m'],
    ]);
  });
});

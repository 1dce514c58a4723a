/**
 * Bad and hostile input over gRPC: each gets the right status code and an actionable message,
 * nothing is stored, and the server keeps serving.
 */
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../client/api/errors.js';
import type { Pod } from '../../client/api/types.js';
import type { Client } from '../../client/client.js';
import { CreateRequest, ListRequest } from '../../proto/gen/kubelab/v1/api.js';
import { startTestControlPlane, type TestControlPlane } from '../support/controlplane.js';

let t: TestControlPlane;
let admin: Client;
let raw: grpc.Client;

beforeAll(async () => {
  t = await startTestControlPlane({ controllers: false });
  admin = t.client();
  raw = new grpc.Client(`127.0.0.1:${t.cp.port}`, grpc.credentials.createSsl(Buffer.from(t.caPem)), {
    'grpc.ssl_target_name_override': 'localhost',
  });
});
afterAll(async () => {
  raw.close();
  await t.close();
});

const pod = (name: string, extra: Partial<Pod> = {}): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, ...extra.metadata },
  spec: { containers: [{ name: 'c', command: ['sleep', '1'] }] },
});

/** A raw unary call with the given bytes and headers: what any client, however broken, can send. */
function rawCall(
  method: string,
  bytes: Buffer,
  token?: string,
): Promise<{ code: number; details: string; status?: unknown }> {
  const md = new grpc.Metadata();
  if (token !== undefined) md.set('authorization', `Bearer ${token}`);
  return new Promise((resolve) => {
    raw.makeUnaryRequest(
      `/kubelab.v1.Resources/${method}`,
      (b: Buffer) => b,
      (b: Buffer) => b,
      bytes,
      md,
      (err) => {
        const statusBytes = err?.metadata?.get('kubelab-status-bin')?.[0];
        resolve({
          code: err?.code ?? 0,
          details: err?.details ?? '',
          status: statusBytes ? JSON.parse(Buffer.from(statusBytes as Buffer).toString()) : undefined,
        });
      },
    );
  });
}

async function rejection(p: Promise<unknown>): Promise<ApiError> {
  try {
    await p;
  } catch (err) {
    return err as ApiError;
  }
  throw new Error('expected the request to fail');
}

async function stillServing(): Promise<void> {
  const list = await admin.list('Namespace');
  expect(list.items.length).toBeGreaterThanOrEqual(4);
}

const listBytes = Buffer.from(ListRequest.encode({ kind: 'Pod' }).finish());

describe('bad input over gRPC', () => {
  it('no token: UNAUTHENTICATED, saying where the admin token is', async () => {
    const res = await rawCall('List', listBytes);
    expect(res.code).toBe(grpc.status.UNAUTHENTICATED);
    expect(res.details).toContain('no bearer token');
    expect(res.details).toContain('admin.token');
    await stillServing();
  });

  it('wrong token: UNAUTHENTICATED', async () => {
    for (const token of ['abcdef.0123456789abcdef0123456789abcdef', 'not-a-token', '']) {
      const res = await rawCall('List', listBytes, token);
      expect(res.code).toBe(grpc.status.UNAUTHENTICATED);
    }
    const typed = await rejection(t.client({ token: 'abcdef.0123456789abcdef0123456789abcdef' }).list('Pod'));
    expect(typed.reason).toBe('Unauthorized');
    await stillServing();
  });

  it('a viewer writing: PERMISSION_DENIED; reading is fine', async () => {
    const viewer = t.client({ role: 'viewer' });
    expect((await viewer.list('Namespace')).items.length).toBeGreaterThan(0);
    const err = await rejection(viewer.create(pod('v')));
    expect(err.code).toBe(grpc.status.PERMISSION_DENIED);
    expect(err.message).toContain('the viewer role may only get, list and watch');
    const res = await rawCall(
      'Create',
      Buffer.from(
        CreateRequest.encode({ manifest: 'apiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n' }).finish(),
      ),
      t.tokenFor('viewer'),
    );
    expect(res.code).toBe(grpc.status.PERMISSION_DENIED);
    await stillServing();
  });

  it('malformed protobuf bytes: INVALID_ARGUMENT', async () => {
    const garbage = [
      Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]),
      Buffer.from([0xff, 0xff, 0xff]),
      Buffer.from('this is not protobuf at all, just some text \u0000\u0001'),
      // 200 levels of nested ApiObject.pod.metadata... beyond the decoder's recursion limit.
      Buffer.concat(Array.from({ length: 200 }, () => Buffer.from([0x0a, 0x00]))),
    ];
    for (const bytes of garbage) {
      const res = await rawCall('Create', bytes, t.cp.adminToken);
      expect([grpc.status.INVALID_ARGUMENT]).toContain(res.code);
    }
    await stillServing();
  });

  it('unknown kind: INVALID_ARGUMENT listing the kinds served', async () => {
    const err = await rejection(admin.list('Gadget' as 'Pod'));
    expect(err.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(err.message).toContain('unknown kind "Gadget"');
    expect(err.message).toContain('Namespace, Node, Pod');
    const res = await rawCall('Get', Buffer.from(ListRequest.encode({ kind: '' }).finish()), t.cp.adminToken);
    expect(res.code).toBe(grpc.status.INVALID_ARGUMENT);
    await stillServing();
  });

  it('invalid names and labels: INVALID_ARGUMENT with every field path', async () => {
    const err = await rejection(
      admin.create(
        pod('UPPER_case', { metadata: { name: 'UPPER_case', labels: { '-bad': 'ok', good: '-bad-' } } }),
      ),
    );
    expect(err.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(err.reason).toBe('Invalid');
    expect(err.causes.map((c) => c.field)).toEqual(['metadata.name', 'metadata.labels', 'metadata.labels']);
    expect(err.message).toContain('metadata.name: Invalid value: "UPPER_case"');
    await stillServing();
  });

  it('unknown fields in a manifest: INVALID_ARGUMENT naming them', async () => {
    const err = await rejection(
      admin.createManifest(
        'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: x\n  labelz: {a: b}\nspec:\n  finalizerz: []\n',
      ),
    );
    expect(err.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(err.causes.map((c) => c.field)).toEqual(['metadata.labelz', 'spec.finalizerz']);
    await expect(admin.get('Namespace', 'x')).rejects.toMatchObject({ reason: 'NotFound' });
    await stillServing();
  });

  it('oversized objects and requests: RESOURCE_EXHAUSTED', async () => {
    const big = await rejection(
      admin.create(
        pod('big', { metadata: { name: 'big', annotations: { blob: 'x'.repeat(2 * 1024 * 1024) } } }),
      ),
    );
    expect(big.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expect(big.message).toContain('over the limit');
    const huge = await rejection(
      admin.create(
        pod('huge', { metadata: { name: 'huge', annotations: { blob: 'x'.repeat(5 * 1024 * 1024) } } }),
      ),
    );
    expect(huge.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    await stillServing();
  });

  it('a stale resourceVersion: ABORTED', async () => {
    const created = await admin.create(pod('stale'));
    await admin.patch('Pod', 'stale', { metadata: { labels: { a: 'b' } } });
    const err = await rejection(
      admin.update({ ...created, metadata: { ...created.metadata, labels: { c: 'd' } } }),
    );
    expect(err.code).toBe(grpc.status.ABORTED);
    expect(err.message).toContain('get the latest version');
    await stillServing();
  });

  it('a patch that breaks validation: INVALID_ARGUMENT, object unchanged', async () => {
    const before = await admin.create(pod('patched'));
    const err = await rejection(admin.patch('Pod', 'patched', { spec: { restartPolicy: 'Sometimes' } }));
    expect(err.code).toBe(grpc.status.INVALID_ARGUMENT);
    const notJson = await rejection(admin.patch('Pod', 'patched', '{"spec":'));
    expect(notJson.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect((await admin.get('Pod', 'patched')).metadata?.resourceVersion).toBe(
      before.metadata?.resourceVersion,
    );
    await stillServing();
  });

  it('hostile manifests: YAML alias bombs and deep nesting are refused', async () => {
    const bomb = [
      'a: &a ["x","x","x","x","x","x","x","x","x"]',
      ...Array.from(
        { length: 9 },
        (_, i) =>
          `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)}]`,
      ),
    ].join('\n');
    const err = await rejection(admin.createManifest(bomb));
    expect(err.code).toBe(grpc.status.INVALID_ARGUMENT);
    const deep = 'apiVersion: v1\nkind: Namespace\nmetadata: ' + '['.repeat(5000) + ']'.repeat(5000) + '\n';
    const deepErr = await rejection(admin.createManifest(deep));
    expect(deepErr.code).toBe(grpc.status.INVALID_ARGUMENT);
    await stillServing();
  });

  it('carries the reason and the field causes in the kubelab-status-bin trailer', async () => {
    const res = await rawCall(
      'Create',
      Buffer.from(
        CreateRequest.encode({
          manifest: 'apiVersion: v1\nkind: Namespace\nmetadata: {name: Bad}\n',
        }).finish(),
      ),
      t.cp.adminToken,
    );
    expect(res.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(res.status).toMatchObject({
      reason: 'Invalid',
      details: { kind: 'Namespace', causes: [{ field: 'metadata.name', type: 'FieldValueInvalid' }] },
    });
  });
});

describe('free-form data', () => {
  it('bounds the nesting of raw JSON fields', async () => {
    let data: Record<string, unknown> = { leaf: 1 };
    for (let i = 0; i < 100; i++) data = { d: data };
    const err = await rejection(
      admin.create({
        apiVersion: 'apps/v1',
        kind: 'ControllerRevision',
        metadata: { name: 'deep' },
        data,
        revision: 1,
      }),
    );
    expect(err.code).toBe(grpc.status.INVALID_ARGUMENT);
    const ok = await admin.create({
      apiVersion: 'apps/v1',
      kind: 'ControllerRevision',
      metadata: { name: 'shallow' },
      data: { spec: { template: { x: 1 } } },
      revision: 1,
    });
    expect(ok.data).toEqual({ spec: { template: { x: 1 } } });
    await stillServing();
  });
});

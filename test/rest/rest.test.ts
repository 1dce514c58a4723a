/**
 * The Kubernetes REST API on the API port, spoken to as any HTTP client would (HTTPS with the
 * cluster's CA, bearer tokens): discovery, Status errors with the right codes, and hostile
 * requests refused with a Status that changes nothing. kubectl's own view is kubectl.test.ts.
 */
import { execFile } from 'node:child_process';
import { request } from 'node:https';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isNotFound } from '../../client/api/errors.js';
import { FakeClock } from '../../client/util/clock.js';
import { startTestControlPlane, type TestControlPlane } from '../support/controlplane.js';

const run = promisify(execFile);
let t: TestControlPlane;
const clock = new FakeClock(Date.parse('2026-12-02T12:00:00Z'));

beforeAll(async () => {
  t = await startTestControlPlane({ clock, historyMs: 60_000 });
});
afterAll(async () => {
  await t?.close();
});

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function call(
  method: string,
  path: string,
  options: { token?: string | null; body?: string | Buffer; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const token = options.token === undefined ? t.cp.adminToken : options.token;
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: t.cp.port,
        method,
        path,
        ca: t.caPem,
        headers: {
          ...(token ? { authorization: `Bearer ${token}` } : {}),
          ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
          ...options.headers,
        },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

function status(a: Answer): {
  kind: string;
  reason: string;
  message: string;
  code: number;
  details?: unknown;
} {
  return JSON.parse(a.body) as { kind: string; reason: string; message: string; code: number };
}

/** The lines of a watch, read until `enough` says so. */
function watchLines(path: string, enough: (lines: string[]) => boolean): Promise<string[]> {
  const lines: string[] = [];
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: t.cp.port,
        path,
        ca: t.caPem,
        headers: { authorization: `Bearer ${t.cp.adminToken}` },
      },
      (res) => {
        let buffered = '';
        res.setEncoding('utf8').on('data', (d: string) => {
          buffered += d;
          const parts = buffered.split('\n');
          buffered = parts.pop()!;
          lines.push(...parts);
          if (enough(lines)) {
            req.destroy();
            resolve(lines);
          }
        });
        res.on('end', () => reject(new Error(`the watch ended after ${lines.length} lines: ${buffered}`)));
      },
    );
    req.on('error', () => undefined);
    req.end();
  });
}

describe('the Kubernetes REST API', () => {
  it('serves discovery from the table of kinds', async () => {
    const core = JSON.parse((await call('GET', '/api/v1')).body) as {
      groupVersion: string;
      resources: Array<{
        name: string;
        namespaced: boolean;
        kind: string;
        verbs: string[];
        shortNames?: string[];
      }>;
    };
    expect(core.groupVersion).toBe('v1');
    expect(core.resources).toContainEqual(
      expect.objectContaining({ name: 'pods', namespaced: true, kind: 'Pod', shortNames: ['po'] }),
    );
    expect(core.resources).toContainEqual(
      expect.objectContaining({ name: 'nodes/status', kind: 'Node', verbs: ['get', 'patch', 'update'] }),
    );
    const groups = JSON.parse((await call('GET', '/apis')).body) as { groups: Array<{ name: string }> };
    expect(groups.groups.map((g) => g.name)).toEqual([
      'coordination.k8s.io',
      'apps',
      'batch',
      'metrics.k8s.io',
      'authorization.k8s.io',
    ]);
    expect(core.resources).toContainEqual(
      expect.objectContaining({ name: 'pods/eviction', group: 'policy', version: 'v1', kind: 'Eviction' }),
    );
    const v3 = JSON.parse((await call('GET', '/openapi/v3')).body) as {
      paths: Record<string, { serverRelativeURL: string }>;
    };
    const apps = JSON.parse((await call('GET', v3.paths['apis/apps/v1'].serverRelativeURL)).body) as {
      components: { schemas: Record<string, { properties?: Record<string, unknown> }> };
    };
    expect(Object.keys(apps.components.schemas['io.kubelab.v1.DaemonSetSpec'].properties ?? {})).toEqual(
      expect.arrayContaining(['selector', 'template', 'updateStrategy']),
    );
    // Aggregated discovery (what kubectl 1.30+ asks for first): every group in one answer.
    const aggregated = await call('GET', '/apis', {
      headers: {
        accept:
          'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json',
      },
    });
    expect(aggregated.headers['content-type']).toBe(
      'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList',
    );
    const list = JSON.parse(aggregated.body) as {
      kind: string;
      items: Array<{
        metadata: { name: string };
        versions: Array<{ version: string; resources: Array<Record<string, unknown>> }>;
      }>;
    };
    expect(list.kind).toBe('APIGroupDiscoveryList');
    const appsGroup = list.items.find((g) => g.metadata.name === 'apps')!;
    expect(appsGroup.versions[0].resources).toContainEqual(
      expect.objectContaining({
        resource: 'daemonsets',
        scope: 'Namespaced',
        shortNames: ['ds'],
        subresources: [expect.objectContaining({ subresource: 'status', verbs: ['get', 'patch', 'update'] })],
      }),
    );
    const legacy = JSON.parse(
      (
        await call('GET', '/api', {
          headers: { accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' },
        })
      ).body,
    ) as typeof list;
    expect(legacy.items.map((g) => g.metadata.name)).toEqual(['']);
    expect(legacy.items[0].versions[0].resources.map((r) => r.resource)).toContain('pods');
    // Health and version are public, as on any cluster.
    expect(await call('GET', '/readyz', { token: null })).toMatchObject({ status: 200, body: 'ok' });
    expect(JSON.parse((await call('GET', '/version', { token: null })).body)).toMatchObject({ major: '1' });
  });

  it('speaks HTTP/2 to a client that offers HTTP/1.1 too (curl, kubectl), gRPC staying on the same port', async () => {
    const caFile = join(t.dataDir, 'pki', 'ca.crt');
    const { stdout } = await run('curl', [
      '-sS',
      '--http2',
      '--cacert',
      caFile,
      '-H',
      `Authorization: Bearer ${t.cp.adminToken}`,
      '-w',
      '\n%{http_version} %{http_code}',
      `https://127.0.0.1:${t.cp.port}/api/v1/namespaces/default`,
    ]);
    const [body, protocol] = stdout.split('\n');
    expect(protocol).toBe('2 200');
    expect(JSON.parse(body)).toMatchObject({ kind: 'Namespace', metadata: { name: 'default' } });
    // The gRPC client of the same server is served as before.
    expect((await t.client().get('Namespace', 'default')).metadata?.name).toBe('default');
  });

  it('answers 401 with a Status without a token or with a wrong one, before reading the body', async () => {
    const none = await call('GET', '/api/v1/pods', { token: null });
    expect(none.status).toBe(401);
    expect(status(none)).toMatchObject({ kind: 'Status', reason: 'Unauthorized', code: 401 });
    expect(none.headers['www-authenticate']).toContain('Bearer');
    // An enormous body from someone without a token is never read.
    const big = await call('POST', '/api/v1/namespaces', {
      token: 'nope',
      body: 'x'.repeat(8 * 1024 * 1024),
    });
    expect(big.status).toBe(401);
  });

  it('refuses a viewer write with 403, and a node reading what it may not', async () => {
    const viewer = t.tokenFor('viewer');
    const body = JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'by-viewer' } });
    const refused = await call('POST', '/api/v1/namespaces', { token: viewer, body });
    expect(refused.status).toBe(403);
    expect(status(refused).message).toContain('the viewer role may only get, list and watch');
    // A delete is authorized on its URL before its DeleteOptions body is read.
    for (const path of ['/api/v1/namespaces/default', '/api/v1/namespaces/default/pods']) {
      // (Node's client frames a DELETE body only with a declared length.)
      const deleted = await call('DELETE', path, {
        token: viewer,
        body: '{not json',
        headers: { 'content-length': '9' },
      });
      expect(deleted.status, `${path}: ${deleted.body}`).toBe(403);
    }
    // So is a patch or an apply: a viewer's oversized body is refused for who sent it, unread.
    for (const type of ['application/apply-patch+yaml', 'application/merge-patch+json']) {
      const patched = await call('PATCH', '/api/v1/namespaces/default/configmaps/x?fieldManager=v', {
        token: viewer,
        body: `{"data":{"a":"${'x'.repeat(4 * 1024 * 1024)}"}}`,
        headers: { 'content-type': type },
      });
      expect(patched.status, `${type}: ${patched.body.slice(0, 200)}`).toBe(403);
    }
    await expect(t.client().get('Namespace', 'by-viewer')).rejects.toSatisfy(isNotFound);
  });

  it('answers bad requests with a Status naming what is wrong, and changes nothing', async () => {
    const malformed = await call('POST', '/api/v1/namespaces', { body: '{"apiVersion": "v1", "kind": ' });
    expect(malformed.status).toBe(400);
    expect(status(malformed).message).toMatch(/JSON|json/);

    const unknownField = await call('POST', '/api/v1/namespaces', {
      body: JSON.stringify({
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: 'typo', lables: { a: 'b' } },
      }),
    });
    expect(unknownField.status).toBe(422);
    expect(JSON.stringify(status(unknownField).details)).toContain('metadata.lables');
    await expect(t.client().get('Namespace', 'typo')).rejects.toSatisfy(isNotFound);

    const wrongVersion = await call('POST', '/api/v1/namespaces/default/pods', {
      body: JSON.stringify({ apiVersion: 'apps/v1', kind: 'Pod', metadata: { name: 'p' } }),
    });
    expect(wrongVersion.status).toBe(400);
    expect(status(wrongVersion).message).toContain('use apiVersion "v1"');

    const tooLarge = await call('POST', '/api/v1/namespaces', {
      body: `{"a":"${'x'.repeat(4 * 1024 * 1024)}"}`,
    });
    expect(tooLarge.status).toBe(413);
    expect(status(tooLarge).reason).toBe('RequestEntityTooLarge');

    const badPatch = await call('PATCH', '/api/v1/namespaces/default', {
      body: '[{"op":"replace","path":"/nope/deeper","value":1}]',
      headers: { 'content-type': 'application/json-patch+json' },
    });
    expect(badPatch.status).toBe(400);

    const protobuf = await call('POST', '/api/v1/namespaces', {
      body: Buffer.from([0x6b, 0x38, 0x73, 0x00]),
      headers: { 'content-type': 'application/vnd.kubernetes.protobuf' },
    });
    expect(protobuf.status).toBe(415);

    const unknownPath = await call('GET', '/api/v1/persistentvolumes');
    expect(unknownPath.status).toBe(404);
    expect(status(unknownPath).message).toContain('kubectl api-resources');

    const longName = await call('GET', `/api/v1/namespaces/${'n'.repeat(100_000)}`);
    expect(longName.status).toBeGreaterThanOrEqual(400);
    expect(longName.body.length).toBeLessThan(3000);
  });

  it('evicts and binds pods, answers access reviews, and refuses what is wrong before changing anything', async () => {
    const c = t.client();
    await c.create({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'evictee', namespace: 'default' },
      spec: { containers: [{ name: 'c', image: 'busybox' }] },
    });
    const eviction = (name: string) =>
      JSON.stringify({
        apiVersion: 'policy/v1',
        kind: 'Eviction',
        metadata: { name, namespace: 'default' },
        deleteOptions: { gracePeriodSeconds: 0 },
      });
    const path = '/api/v1/namespaces/default/pods/evictee';
    // A viewer is refused before its body is read; a mismatched name changes nothing.
    const viewer = await call('POST', `${path}/eviction`, { token: t.tokenFor('viewer'), body: '{not json' });
    expect(viewer.status).toBe(403);
    const mismatch = await call('POST', `${path}/eviction`, { body: eviction('other') });
    expect(mismatch.status).toBe(400);
    expect(status(mismatch).message).toContain('name in URL does not match name in Eviction object');
    const asGet = await call('GET', `${path}/eviction`);
    expect(asGet.status).toBe(405);

    const noNode = await call('GET', `${path}/log`);
    expect(noNode.status).toBeGreaterThanOrEqual(400);
    expect(status(noNode).message).toContain('evictee');

    const bound = await call('POST', `${path}/binding`, {
      body: JSON.stringify({
        apiVersion: 'v1',
        kind: 'Binding',
        metadata: { name: 'evictee' },
        target: { kind: 'Node', name: 'n1' },
      }),
    });
    expect(bound.status).toBe(201);
    expect((await c.get('Pod', 'evictee', { namespace: 'default' })).spec?.nodeName).toBe('n1');

    const evicted = await call('POST', `${path}/eviction`, { body: eviction('evictee') });
    expect(evicted.status).toBe(201);
    expect(JSON.parse(evicted.body)).toMatchObject({ kind: 'Status', status: 'Success', code: 201 });
    await expect(c.get('Pod', 'evictee', { namespace: 'default' })).rejects.toSatisfy(isNotFound);

    const review = (token: string, spec: unknown) =>
      call('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
        token,
        body: JSON.stringify({
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SelfSubjectAccessReview',
          spec,
        }),
      });
    const viewerCreate = await review(t.tokenFor('viewer'), {
      resourceAttributes: { verb: 'create', resource: 'pods', namespace: 'default' },
    });
    expect(viewerCreate.status).toBe(201);
    expect(JSON.parse(viewerCreate.body).status).toEqual({
      allowed: false,
      reason: 'the viewer role may only get, list and watch; use an admin token to make changes',
    });
    const adminNonResource = await review(t.cp.adminToken, {
      nonResourceAttributes: { verb: 'get', path: '/metrics' },
    });
    expect(JSON.parse(adminNonResource.body).status.allowed).toBe(true);
    const neither = await review(t.cp.adminToken, {});
    expect(neither.status).toBe(422);
    expect(JSON.stringify(status(neither).details)).toContain('spec.resourceAttributes');
    const listed = await call('GET', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews');
    expect(listed.status).toBe(405);
  });

  it('applies server-side: 201 then 200, a conflict as a Status naming owner and field, and refuses a malformed apply', async () => {
    const url = '/api/v1/namespaces/default/configmaps/ssa?fieldManager=ops';
    const applyPatch = (body: unknown, query = '', headers: Record<string, string> = {}) =>
      call('PATCH', url + query, {
        body: typeof body === 'string' ? body : JSON.stringify(body),
        headers: { 'content-type': 'application/apply-patch+yaml', ...headers },
      });
    const created = await applyPatch(
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa\ndata:\n  mode: fast\n',
    );
    expect(created.status, created.body).toBe(201);
    const cm = JSON.parse(created.body) as { metadata: { managedFields: unknown[] } };
    expect(cm.metadata.managedFields).toEqual([
      {
        manager: 'ops',
        operation: 'Apply',
        apiVersion: 'v1',
        time: '2026-12-02T12:00:00Z',
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:data': { 'f:mode': {} } },
      },
    ]);
    const same = await applyPatch({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'ssa' },
      data: { mode: 'fast' },
    });
    expect(same.status).toBe(200);

    // An Update by another client, named by its User-Agent as Kubernetes does.
    const updated = await call('PATCH', '/api/v1/namespaces/default/configmaps/ssa', {
      body: '{"data":{"mode":"slow"}}',
      headers: { 'content-type': 'application/merge-patch+json', 'user-agent': 'my-script/1.0 (linux)' },
    });
    expect(updated.status).toBe(200);
    const conflict = await applyPatch({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'ssa' },
      data: { mode: 'fast' },
    });
    expect(conflict.status).toBe(409);
    expect(status(conflict)).toMatchObject({
      reason: 'Conflict',
      message:
        'Apply failed with 1 conflict: conflict with "my-script" using v1 at 2026-12-02T12:00:00Z: .data.mode',
      details: {
        causes: [
          {
            reason: 'FieldManagerConflict',
            message: 'conflict with "my-script" using v1 at 2026-12-02T12:00:00Z',
            field: '.data.mode',
          },
        ],
      },
    });
    const forced = await applyPatch(
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ssa' }, data: { mode: 'fast' } },
      '&force=true',
    );
    expect(forced.status).toBe(200);
    expect(JSON.parse(forced.body)).toMatchObject({ data: { mode: 'fast' } });
    const rv = (JSON.parse(forced.body) as { metadata: { resourceVersion: string } }).metadata
      .resourceVersion;

    // Malformed applies change nothing.
    const noManager = await call('PATCH', '/api/v1/namespaces/default/configmaps/ssa', {
      body: '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"ssa"}}',
      headers: { 'content-type': 'application/apply-patch+yaml' },
    });
    expect(noManager.status).toBe(422);
    expect(status(noManager).message).toContain('fieldManager: Required value: is required for apply patch');
    const withManaged = await applyPatch({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'ssa', managedFields: [{ manager: 'x', operation: 'Apply' }] },
    });
    expect(withManaged.status).toBe(400);
    expect(status(withManaged).message).toContain('metadata.managedFields must be nil');
    const otherName = await applyPatch({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'other' } });
    expect(status(otherName).message).toContain('does not match the name on the URL');
    const noKind = await applyPatch({ apiVersion: 'v1', metadata: { name: 'ssa' } });
    expect(noKind.status).toBe(400);
    const forceOnMerge = await call('PATCH', '/api/v1/namespaces/default/configmaps/ssa?force=true', {
      body: '{"data":{"mode":"x"}}',
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    expect(forceOnMerge.status).toBe(400);
    const badFields = await call('PATCH', '/api/v1/namespaces/default/configmaps/ssa', {
      body: JSON.stringify({
        metadata: { managedFields: [{ manager: 'x', operation: 'Steal', fieldsV1: { 'q:x': {} } }] },
      }),
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    expect(badFields.status).toBe(422);
    expect(status(badFields).message).toContain('metadata.managedFields[0].operation');
    const now = await t.client().get('ConfigMap', 'ssa', { namespace: 'default' });
    expect(now.metadata?.resourceVersion).toBe(rv);

    // managedFields: [{}] drops them, as in Kubernetes.
    const reset = await call('PATCH', '/api/v1/namespaces/default/configmaps/ssa', {
      body: '{"metadata":{"managedFields":[{}]}}',
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    expect(reset.status).toBe(200);
    expect(
      (JSON.parse(reset.body) as { metadata: Record<string, unknown> }).metadata.managedFields,
    ).toBeUndefined();
  });

  it('streams a watch as lines of JSON, and answers 410 for a resourceVersion that is gone', async () => {
    const c = t.client();
    const ns = await c.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'watched' } });
    const rv = ns.metadata!.resourceVersion!;
    const lines: string[] = [];
    await new Promise<void>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port: t.cp.port,
          path: `/api/v1/namespaces?watch=1&resourceVersion=${rv}&fieldSelector=metadata.name%3Dwatched`,
          ca: t.caPem,
          headers: { authorization: `Bearer ${t.cp.adminToken}` },
        },
        (res) => {
          if (res.statusCode !== 200) {
            res
              .setEncoding('utf8')
              .on('data', (d: string) => reject(new Error(`watch answered ${res.statusCode}: ${d}`)));
            return;
          }
          let buffered = '';
          res.setEncoding('utf8').on('data', (d: string) => {
            buffered += d;
            const parts = buffered.split('\n');
            buffered = parts.pop()!;
            lines.push(...parts);
            if (lines.length >= 1) {
              req.destroy();
              resolve();
            }
          });
          void c.patch('Namespace', 'watched', { metadata: { labels: { seen: 'yes' } } }).catch(reject);
        },
      );
      req.on('error', () => undefined);
      req.end();
    });
    const event = JSON.parse(lines[0]) as {
      type: string;
      object: { metadata: { labels?: Record<string, string> } };
    };
    expect(event.type).toBe('MODIFIED');
    expect(event.object.metadata.labels).toEqual({ seen: 'yes' });

    // sendInitialEvents (a streaming list, client-go's WatchList): every object as ADDED, then a
    // bookmark that says the initial events have ended.
    const initial = await watchLines(
      '/api/v1/namespaces?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true',
      (seen) => seen.some((l) => l.includes('"BOOKMARK"')),
    );
    const events = initial.map(
      (l) => JSON.parse(l) as { type: string; object: { metadata: Record<string, unknown> } },
    );
    const listed = (await c.list('Namespace')).items.map((n) => n.metadata?.name).sort();
    expect(events.slice(0, -1).every((e) => e.type === 'ADDED')).toBe(true);
    expect(
      events
        .slice(0, -1)
        .map((e) => e.object.metadata.name)
        .sort(),
    ).toEqual(listed);
    expect(events.at(-1)).toMatchObject({
      type: 'BOOKMARK',
      object: { metadata: { annotations: { 'k8s.io/initial-events-end': 'true' } } },
    });
    const noBookmarks = await call('GET', '/api/v1/namespaces?watch=1&sendInitialEvents=true');
    expect(noBookmarks.status).toBe(400);
    expect(status(noBookmarks).message).toContain('allowWatchBookmarks=true');

    // Once the event has left the server's 60 s of history, a watch from before it is refused.
    clock.advance(120_000);
    await c.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'later' } });
    const gone = await call('GET', `/api/v1/namespaces?watch=1&resourceVersion=${rv}`);
    expect(gone.status).toBe(410);
    expect(status(gone)).toMatchObject({ reason: 'Expired', code: 410 });
  });
});

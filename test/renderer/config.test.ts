/**
 * ConfigMaps and Secrets as the GUI shows them: their pages in the address; value sizes and
 * decoding; a ConfigMap's keys; what the Secrets store keeps of a Secret (sizes, never values
 * — not even in kubectl's last-applied annotation); what each value cell shows for an admin
 * and a viewer; and, through the GUI's own bridge on a real control plane, that the store
 * holds no value for an admin, that a viewer's Secrets come redacted, and that revealing
 * reads the value only for an admin.
 */
import fc from 'fast-check';
import { createPinia, setActivePinia } from 'pinia';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConfigMap, Secret } from '../../client/api/types.js';
import {
  REDACTED_ANNOTATION as SERVER_REDACTED_ANNOTATION,
  redactSecret,
} from '../../main/apiserver/redaction.js';
import type { BridgeClient } from '../../renderer/src/bridge/client.js';
import { configMapEntries, dataCount } from '../../renderer/src/configmap/entries.js';
import { parseRoute, routeHash, sectionOf, type Route } from '../../renderer/src/router.js';
import {
  canReadSecretValues,
  hiddenText,
  REDACTED_ANNOTATION,
  revealedValue,
  secretSummary,
  valueCell,
} from '../../renderer/src/secret/summary.js';
import { useSecrets } from '../../renderer/src/stores/kinds.js';
import { base64Bytes, base64Text, bytesText, utf8Bytes } from '../../renderer/src/util/base64.js';
import { startTestControlPlane, type TestControlPlane } from '../support/controlplane.js';
import { eventually } from '../support/wait.js';
import { loopbackBridge } from './loopback.js';

const b64 = (text: string | Uint8Array) => Buffer.from(text).toString('base64');
const PASSWORD = 'pa55-wörd!';
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

const secret = (data: Record<string, string>, extra: Partial<Secret> = {}): Secret => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: 'db', namespace: 'default' },
  data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, b64(v)])),
  ...extra,
});

describe('config routes', () => {
  it('reads the lists and pages from the hash, writes them back the same, under their list', () => {
    const routes: Array<[string, Route]> = [
      ['#configmaps', { view: 'configmaps' }],
      ['#secrets', { view: 'secrets' }],
      [
        '#configmap/kube-system/kube-root-ca.crt',
        { view: 'configmap', namespace: 'kube-system', name: 'kube-root-ca.crt' },
      ],
      ['#secret/default/db', { view: 'secret', namespace: 'default', name: 'db' }],
    ];
    for (const [hash, route] of routes) {
      expect(parseRoute(hash)).toEqual(route);
      expect(routeHash(route)).toBe(hash);
    }
    expect(parseRoute('#secret/default')).toEqual({ view: 'overview' });
    expect(sectionOf({ view: 'configmap', namespace: 'a', name: 'b' })).toBe('configmaps');
    expect(sectionOf({ view: 'secret', namespace: 'a', name: 'b' })).toBe('secrets');
  });
});

describe('value sizes and decoding', () => {
  it('sizes a base64 value without decoding it, padded or not', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        const padded = b64(bytes);
        expect(base64Bytes(padded)).toBe(bytes.length);
        expect(base64Bytes(padded.replace(/=+$/, ''))).toBe(bytes.length);
      }),
    );
  });

  it('decodes UTF-8 values to text, and leaves binary and broken ones undecoded', () => {
    expect(base64Text(b64(PASSWORD))).toBe(PASSWORD);
    expect(base64Text(b64('line 1\nline 2\n'))).toBe('line 1\nline 2\n');
    expect(base64Text('')).toBe('');
    expect(base64Text(b64(new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0xff])))).toBeUndefined();
    expect(base64Text('not base64!')).toBeUndefined();
  });

  it('counts UTF-8 bytes and says them as kubectl describe does', () => {
    expect(utf8Bytes('wörd')).toBe(5);
    expect(bytesText(1)).toBe('1 byte');
    expect(bytesText(0)).toBe('0 bytes');
    expect(bytesText(16)).toBe('16 bytes');
  });
});

describe('ConfigMap entries', () => {
  it('lists text values in full and binary ones by size, by key, and counts both as DATA', () => {
    const cm: ConfigMap = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'app', namespace: 'default' },
      data: { 'z.conf': 'x=1\n', greeting: 'grüß dich' },
      binaryData: { 'logo.png': b64(new Uint8Array([1, 2, 3, 4, 5])) },
    };
    expect(configMapEntries(cm)).toEqual([
      { key: 'greeting', binary: false, value: 'grüß dich', bytes: 11 },
      { key: 'logo.png', binary: true, bytes: 5 },
      { key: 'z.conf', binary: false, value: 'x=1\n', bytes: 4 },
    ]);
    expect(dataCount(cm)).toBe(3);
    expect(dataCount({ metadata: { name: 'empty' } })).toBe(0);
    expect(configMapEntries({ metadata: { name: 'empty' } })).toEqual([]);
  });
});

describe('what the Secrets store keeps', () => {
  it('keeps names, type and sizes, and no value — not even the one kubectl apply recorded', () => {
    const s = secret(
      { username: 'admin', password: PASSWORD },
      { type: 'kubernetes.io/basic-auth', immutable: true },
    );
    s.metadata!.annotations = {
      owner: 'lab',
      [LAST_APPLIED]: JSON.stringify({ stringData: { password: PASSWORD } }),
    };
    const kept = secretSummary(s);
    expect(kept).toMatchObject({
      kind: 'Secret',
      type: 'kubernetes.io/basic-auth',
      immutable: true,
      redacted: false,
      keys: [
        { key: 'password', bytes: 11 },
        { key: 'username', bytes: 5 },
      ],
    });
    expect(kept.metadata).toMatchObject({ name: 'db', namespace: 'default' });
    expect(kept.metadata?.annotations).toEqual({ owner: 'lab' });
    const json = JSON.stringify(kept);
    for (const leaked of [PASSWORD, b64(PASSWORD), 'admin', b64('admin')]) expect(json).not.toContain(leaked);
  });

  it('defaults the type to Opaque, and a Secret without data has no keys', () => {
    expect(secretSummary({ kind: 'Secret', metadata: { name: 'x' } })).toMatchObject({
      type: 'Opaque',
      immutable: false,
      keys: [],
    });
  });

  it('knows a Secret the server redacted for a viewer: keys kept, sizes unknown', () => {
    expect(REDACTED_ANNOTATION).toBe(SERVER_REDACTED_ANNOTATION);
    const kept = secretSummary(redactSecret(secret({ password: PASSWORD })));
    expect(kept.redacted).toBe(true);
    expect(kept.keys).toEqual([{ key: 'password' }]);
    // An admin's Secret that merely carries the annotation still has its values.
    const marked = secret({ password: PASSWORD });
    marked.metadata!.annotations = { [REDACTED_ANNOTATION]: 'copied from elsewhere' };
    expect(secretSummary(marked).keys).toEqual([{ key: 'password', bytes: 11 }]);
  });
});

describe('revealing a value', () => {
  it('only an admin reads values; a viewer is told why not', () => {
    expect(canReadSecretValues('admin')).toBe(true);
    for (const role of ['viewer', 'node', undefined]) expect(canReadSecretValues(role)).toBe(false);
    expect(hiddenText('viewer')).toBe('hidden: your role (viewer) cannot read Secret values');
  });

  it('decodes the fetched value: text, binary as base64, gone, or withheld by the server', () => {
    const binary = b64(new Uint8Array([0, 0xff, 0xfe]));
    const s = secret({ password: PASSWORD });
    s.data!.blob = binary;
    expect(revealedValue(s, 'password')).toEqual({ state: 'text', text: PASSWORD });
    expect(revealedValue(s, 'blob')).toEqual({ state: 'binary', base64: binary, bytes: 3 });
    expect(revealedValue(s, 'gone')).toEqual({ state: 'missing' });
    expect(revealedValue(redactSecret(s) as Secret, 'password')).toEqual({ state: 'hidden' });
  });

  it('shows in each value cell: the value, Reveal, or why it stays hidden', () => {
    const text = { state: 'text', text: PASSWORD } as const;
    const cases: Array<[Parameters<typeof valueCell>, ReturnType<typeof valueCell>]> = [
      [[undefined, undefined], { show: 'pending' }],
      [[undefined, 'admin'], { show: 'reveal' }],
      [[undefined, 'viewer'], { show: 'hidden', text: hiddenText('viewer') }],
      [[text, 'admin'], { show: 'value', text: PASSWORD, binary: false }],
      [
        [{ state: 'binary', base64: 'AP8=', bytes: 2 }, 'admin'],
        { show: 'value', text: 'AP8=', binary: true },
      ],
      [[{ state: 'missing' }, 'admin'], { show: 'missing' }],
      [[{ state: 'hidden' }, 'admin'], { show: 'hidden', text: hiddenText('admin') }],
    ];
    for (const [args, cell] of cases) expect(valueCell(...args)).toEqual(cell);
  });
});

describe('Secrets through the bridge', () => {
  let t: TestControlPlane;
  beforeAll(async () => {
    t = await startTestControlPlane({ controllers: false });
    await t.cp.client().create(secret({ password: PASSWORD }));
  });
  afterAll(async () => {
    await t.close();
  });

  async function storeAs(role: 'admin' | 'viewer') {
    setActivePinia(createPinia());
    const { bridge } = loopbackBridge(t, { name: `${role}-user`, role });
    const store = useSecrets();
    store.start(bridge);
    await eventually(() => store.get('default/db') !== undefined, 'the Secret in the store');
    return { bridge, store };
  }
  const fetch = (bridge: BridgeClient) =>
    bridge.request<Secret>({ op: 'get', kind: 'Secret', name: 'db', namespace: 'default' });

  it('an admin store holds sizes, no values; revealing reads the value', async () => {
    const { bridge, store } = await storeAs('admin');
    expect(store.get('default/db')).toMatchObject({
      redacted: false,
      keys: [{ key: 'password', bytes: 11 }],
    });
    expect(JSON.stringify(store.items)).not.toContain(b64(PASSWORD));
    expect(revealedValue(await fetch(bridge), 'password')).toEqual({ state: 'text', text: PASSWORD });
    store.stop();
  });

  it('a viewer store holds the keys only, and revealing finds the value withheld', async () => {
    const { bridge, store } = await storeAs('viewer');
    expect(store.get('default/db')).toMatchObject({ redacted: true, keys: [{ key: 'password' }] });
    const got = await fetch(bridge);
    expect(JSON.stringify(got)).not.toContain(b64(PASSWORD));
    expect(revealedValue(got, 'password')).toEqual({ state: 'hidden' });
    store.stop();
  });
});

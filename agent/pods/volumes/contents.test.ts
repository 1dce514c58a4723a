import { describe, expect, it } from 'vitest';
import type { ConfigMap, Pod, Secret, Volume } from '../../../client/api/types.js';
import { volumeContents, type Lookup } from './contents.js';

const pod: Pod = {
  metadata: {
    name: 'web',
    namespace: 'lab',
    uid: 'u-1',
    labels: { app: 'web', tier: 'front' },
    annotations: { note: 'say "hi"' },
  },
};
const configMap: ConfigMap = {
  metadata: { name: 'settings', namespace: 'lab' },
  data: { 'app.conf': 'color=blue\n', mode: 'fast' },
  binaryData: { 'logo.bin': Buffer.from([0, 1, 2]).toString('base64') },
};
const secret: Secret = {
  metadata: { name: 'db', namespace: 'lab' },
  data: { password: Buffer.from('hunter2').toString('base64') },
};
const objects: Lookup = (kind, name) =>
  kind === 'ConfigMap' && name === 'settings'
    ? configMap
    : kind === 'Secret' && name === 'db'
      ? secret
      : null;

function files(volume: Volume, lookup: Lookup = objects) {
  const out = volumeContents(pod, volume, lookup);
  if ('error' in out) return out;
  return out.files.map((f) => ({ path: f.path, text: f.data.toString('utf8'), mode: f.mode.toString(8) }));
}

describe('volume contents', () => {
  it('a configMap volume holds every key (data and binaryData) as a file, 0644 unless told', () => {
    expect(files({ name: 'v', configMap: { name: 'settings' } })).toEqual([
      { path: 'app.conf', text: 'color=blue\n', mode: '644' },
      { path: 'logo.bin', text: '\u0000\u0001\u0002', mode: '644' },
      { path: 'mode', text: 'fast', mode: '644' },
    ]);
    expect(files({ name: 'v', configMap: { name: 'settings', defaultMode: 0o400 } })).toEqual([
      expect.objectContaining({ path: 'app.conf', mode: '400' }),
      expect.objectContaining({ path: 'logo.bin', mode: '400' }),
      expect.objectContaining({ path: 'mode', mode: '400' }),
    ]);
  });

  it('items pick keys, place them at paths (with directories) and set modes', () => {
    expect(
      files({
        name: 'v',
        secret: { secretName: 'db', defaultMode: 0o440, items: [{ key: 'password', path: 'db/pw' }] },
      }),
    ).toEqual([{ path: 'db/pw', text: 'hunter2', mode: '440' }]);
    expect(
      files({
        name: 'v',
        configMap: { name: 'settings', items: [{ key: 'mode', path: 'm', mode: 0o600 }] },
      }),
    ).toEqual([{ path: 'm', text: 'fast', mode: '600' }]);
  });

  it("a missing object or key stops the volume with Kubernetes' message, unless optional", () => {
    expect(files({ name: 'v', configMap: { name: 'absent' } })).toEqual({
      error: 'configmap "absent" not found',
    });
    expect(files({ name: 'v', secret: { secretName: 'absent' } })).toEqual({
      error: 'secret "absent" not found',
    });
    expect(files({ name: 'v', configMap: { name: 'absent', optional: true } })).toEqual([]);
    expect(
      files({ name: 'v', configMap: { name: 'settings', items: [{ key: 'nope', path: 'x' }] } }),
    ).toEqual({ error: 'configmap references non-existent config key: nope' });
    expect(
      files({ name: 'v', secret: { secretName: 'db', optional: true, items: [{ key: 'nope', path: 'x' }] } }),
    ).toEqual([]);
  });

  it('a downwardAPI volume holds pod fields; whole label and annotation maps as sorted key="value" lines', () => {
    expect(
      files({
        name: 'v',
        downwardAPI: {
          items: [
            { path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } },
            { path: 'annotations', fieldRef: { fieldPath: 'metadata.annotations' } },
            { path: 'name', fieldRef: { fieldPath: 'metadata.name' } },
            { path: 'app', fieldRef: { fieldPath: "metadata.labels['app']" } },
          ],
        },
      }),
    ).toEqual([
      { path: 'annotations', text: 'note="say \\"hi\\""\n', mode: '644' },
      { path: 'app', text: 'web', mode: '644' },
      { path: 'labels', text: 'app="web"\ntier="front"\n', mode: '644' },
      { path: 'name', text: 'web', mode: '644' },
    ]);
  });

  it('a projected volume joins ConfigMaps, Secrets and pod fields under one defaultMode', () => {
    expect(
      files({
        name: 'v',
        projected: {
          defaultMode: 0o444,
          sources: [
            { configMap: { name: 'settings', items: [{ key: 'mode', path: 'mode' }] } },
            { secret: { name: 'db' } },
            { downwardAPI: { items: [{ path: 'ns', fieldRef: { fieldPath: 'metadata.namespace' } }] } },
            { configMap: { name: 'absent', optional: true } },
          ],
        },
      }),
    ).toEqual([
      { path: 'mode', text: 'fast', mode: '444' },
      { path: 'ns', text: 'lab', mode: '444' },
      { path: 'password', text: 'hunter2', mode: '444' },
    ]);
  });
});

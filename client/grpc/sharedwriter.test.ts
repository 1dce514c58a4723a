import { BinaryWriter } from '@bufbuild/protobuf/wire';
import { expect, it } from 'vitest';
import { ApiObject } from '../../proto/gen/kubelab/v1/api.js';
import { kindInfo, toApiObject } from '../api/kinds.js';
import type { KubeObject } from '../api/types.js';
import { encodeShared } from './sharedwriter.js';

const pod = (name: string, note = ''): KubeObject =>
  ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', labels: { app: name }, annotations: { note } },
    spec: { nodeName: 'lab-1', containers: [{ name: 'main', command: ['sleep', 'infinity'] }] },
  }) as KubeObject;

const message = (obj: KubeObject) => toApiObject(kindInfo('Pod'), obj);
const fresh = (obj: KubeObject) => ApiObject.encode(message(obj)).finish();
const shared = (obj: KubeObject) => encodeShared((w) => ApiObject.encode(message(obj), w));
/** Compared as text: element-wise comparison of megabyte arrays is slow. */
const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');

it('encodes exactly as a fresh writer does, small after large after small', () => {
  const objects = [
    pod('a'),
    pod('b', 'x'.repeat(5_000)),
    pod('c'),
    pod('d', 'y'.repeat(2 * 1024 * 1024)),
    pod('e'),
  ];
  const results = objects.map(shared);
  objects.forEach((obj, i) => expect(hex(results[i])).toBe(hex(fresh(obj))));
  // Each result is its own copy: later encodings do not overwrite earlier ones.
  expect(ApiObject.decode(results[0]).pod?.metadata?.name).toBe('a');
});

it('starts clean after an encoding that threw halfway', () => {
  expect(() =>
    encodeShared((w: BinaryWriter) => {
      w.uint32(10).fork().string('half a message');
      throw new Error('cannot encode this');
    }),
  ).toThrow('cannot encode this');
  expect(hex(shared(pod('after')))).toBe(hex(fresh(pod('after'))));
});

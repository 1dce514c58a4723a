import { describe, expect, it, vi } from 'vitest';
import { ApiObject, ListResponse, LogChunk, ResourcesService } from '../../proto/gen/kubelab/v1/api.js';
import type { Pod } from '../api/types.js';
import { resolveKind, toApiObject } from '../api/kinds.js';
import { decodeWithWireReader, WireReader } from './wirereader.js';

const podInfo = resolveKind('Pod')!;

function pod(
  name: string,
  annotations: Record<string, string>,
  labels: Record<string, string> = {},
): ApiObject {
  const p: Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', labels, annotations },
    spec: {
      containers: [{ name: 'c', image: 'busybox:1.36', command: ['sleep', '3600'] }],
      tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' }],
    },
  };
  return toApiObject(podInfo, p);
}

const strings = [
  '',
  'a',
  'default',
  'x'.repeat(48),
  'x'.repeat(49),
  'y'.repeat(70_000),
  'grüße',
  'ü',
  '日本語のラベル',
  'emoji 🚀 in a value',
  'é'.repeat(30),
  'tab\tand\nnewline',
];

describe('WireReader', () => {
  it('decodes exactly what the library decoder does: short, long, non-ASCII and empty strings', () => {
    const annotations = Object.fromEntries(strings.map((s, i) => [`k${i}/${s.slice(0, 20)}`, s]));
    const bytes = Buffer.from(ApiObject.encode(pod('p', annotations, { app: 'web', tier: '' })).finish());
    expect(ApiObject.decode(new WireReader(bytes))).toEqual(ApiObject.decode(bytes));
    expect(ApiObject.decode(new WireReader(bytes)).pod?.metadata?.annotations).toEqual(annotations);
  });

  it('gives the right string for every one of many distinct short strings, repeated (shared slots)', () => {
    const items = Array.from({ length: 20_000 }, (_, i) =>
      pod(`pod-${i}`, { seq: String(i), same: 'shared-value', hash: (i * 2654435761).toString(36) }),
    );
    const bytes = Buffer.from(ListResponse.encode({ resourceVersion: '9', items }).finish());
    const expected = ListResponse.decode(bytes).items!.map((o) => o.pod!.metadata);
    for (let round = 0; round < 2; round++) {
      const decoded = ListResponse.decode(new WireReader(bytes));
      expect(decoded.items!.map((o) => o.pod!.metadata)).toEqual(expected);
    }
    expect(expected[12_345]).toMatchObject({ name: 'pod-12345', annotations: { seq: '12345' } });
  });

  it('leaves bytes fields alone (a log chunk arrives as the bytes that were sent)', () => {
    const data = Buffer.from([0, 255, 0x80, 10, 0xc3, 0x28, ...Buffer.from('log line\n')]);
    const bytes = Buffer.from(LogChunk.encode({ data }).finish());
    expect(Buffer.from(LogChunk.decode(new WireReader(bytes)).data!)).toEqual(data);
  });

  it('reads a plain Uint8Array as well as a Buffer', () => {
    const bytes = ApiObject.encode(pod('plain', { note: 'grüße', pad: 'z'.repeat(100) })).finish();
    const copy = new Uint8Array(bytes);
    expect(ApiObject.decode(new WireReader(copy))).toEqual(ApiObject.decode(bytes));
  });

  it('refuses a string that runs past the end of the message', () => {
    const bytes = Buffer.from(ApiObject.encode(pod('truncated', { pad: 'q'.repeat(300) })).finish());
    expect(() => ApiObject.decode(new WireReader(bytes.subarray(0, bytes.length - 10)))).toThrow(
      /premature EOF/,
    );
    // A short string's length byte pointing beyond the buffer.
    expect(() => new WireReader(Uint8Array.of(5, 0x61, 0x62)).string()).toThrow(/premature EOF/);
  });

  it('makes a service definition decode its responses or requests through a WireReader', () => {
    const spy = vi.spyOn(WireReader.prototype, 'string');
    const bytes = Buffer.from(ApiObject.encode(pod('svc', { a: 'b' })).finish());
    const responses = decodeWithWireReader(ResourcesService, 'response');
    expect(responses.get.responseDeserialize(bytes)).toEqual(ApiObject.decode(bytes));
    expect(spy).toHaveBeenCalled();
    expect(responses.get.requestDeserialize).toBe(ResourcesService.get.requestDeserialize);
    spy.mockClear();
    const req = Buffer.from(
      ResourcesService.get.requestSerialize({ kind: 'Pod', namespace: 'n', name: 'x' }),
    );
    const requests = decodeWithWireReader(ResourcesService, 'request');
    expect(requests.get.requestDeserialize(req)).toEqual(ResourcesService.get.requestDeserialize(req));
    expect(spy).toHaveBeenCalled();
    spy.mockRestore();
  });
});

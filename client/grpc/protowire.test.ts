import { describe, expect, it } from 'vitest';
import { CallRequest, CallResult, ResourcesService, UpdateRequest } from '../../proto/gen/kubelab/v1/api.js';
import { encodeCallRequest, encodeCallResult, withFastRequests } from './protowire.js';

const generic = {
  request: (m: CallRequest) => Buffer.from(CallRequest.encode(m).finish()),
  result: (m: CallResult) => Buffer.from(CallResult.encode(m).finish()),
};

describe('protobuf written by hand', () => {
  it('writes CallRequests byte for byte as the generated encoder does', () => {
    for (const m of [
      { id: 1, method: 'Update', request: Buffer.from('abc') },
      { id: 2 ** 40 + 3, method: 'Get', request: Buffer.alloc(70_000, 7) },
      { id: 0, method: '', request: Buffer.alloc(0) },
      {},
      { id: 127, method: 'Pätch ✓' },
    ] as CallRequest[]) {
      const bytes = encodeCallRequest(m);
      expect(bytes.equals(generic.request(m))).toBe(true);
      expect(CallRequest.decode(bytes)).toEqual(CallRequest.decode(generic.request(m)));
    }
  });

  it('writes CallResults byte for byte as the generated encoder does, errors included', () => {
    for (const m of [
      { id: 9, response: Buffer.from([1, 2, 3]) },
      { id: 300, code: 5, message: 'pods "a" not found — ünïcode', status: Buffer.alloc(200, 1) },
      { id: Number.MAX_SAFE_INTEGER, code: 16, message: 'x'.repeat(5000) },
      { id: 1, code: -1, message: 'negative codes take the generic path' },
      {},
    ] as CallResult[]) {
      const bytes = encodeCallResult(m);
      expect(bytes.equals(generic.result(m))).toBe(true);
      expect(CallResult.decode(bytes)).toEqual(CallResult.decode(generic.result(m)));
    }
  });

  it("serializes the Resources service's requests as the generated definition does", () => {
    const fast = withFastRequests(ResourcesService);
    const update: UpdateRequest = {
      object: { pod: { metadata: { name: 'a', namespace: 'default', labels: { app: 'x'.repeat(300) } } } },
      fieldManager: 'kubelab-agent',
    } as UpdateRequest;
    expect(
      fast.update.requestSerialize(update).equals(ResourcesService.update.requestSerialize(update)),
    ).toBe(true);
    // Encodings handed out earlier stay intact when the shared writer is used again.
    const first = fast.updateStatus.requestSerialize(update);
    const copy = Buffer.from(first);
    fast.get.requestSerialize({ kind: 'Pod', name: 'b'.repeat(2000) } as never);
    expect(first.equals(copy)).toBe(true);
    const call = { id: 4, method: 'Update', request: first };
    expect(fast.calls.requestSerialize(call).equals(ResourcesService.calls.requestSerialize(call))).toBe(
      true,
    );
    // Methods it has no encoder of keep theirs.
    expect(Object.keys(fast).sort()).toEqual(Object.keys(ResourcesService).sort());
  });
});

import { BinaryWriter } from '@bufbuild/protobuf/wire';
import { describe, expect, it } from 'vitest';
import { ApiObject, CreateRequest, UpdateRequest } from '../../proto/gen/kubelab/v1/api.js';
import { decodeWriteEnvelope, kindOfObjectBytes } from './writeenvelope.js';

const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'lab' } };

describe('decodeWriteEnvelope', () => {
  it.each([
    ['CreateRequest', CreateRequest],
    ['UpdateRequest', UpdateRequest],
  ] as const)('reads a %s, keeping the object and the manifest as views of its bytes', (_, type) => {
    const bytes = Buffer.from(
      type
        .encode({
          object: { pod },
          manifest: 'kind: Pod',
          namespace: 'lab',
          dryRun: true,
          kind: 'Pod',
          name: 'web',
        })
        .finish(),
    );
    const envelope = decodeWriteEnvelope(bytes);
    expect(envelope).toMatchObject({ namespace: 'lab', dryRun: true, kind: 'Pod', name: 'web' });
    expect(Buffer.from(envelope.manifest!).toString()).toBe('kind: Pod');
    expect(ApiObject.decode(envelope.object!).pod?.metadata?.name).toBe('web');
    expect(envelope.object!.buffer).toBe(bytes.buffer);
  });

  it('refuses bytes that are no message', () => {
    expect(() => decodeWriteEnvelope(Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 1]))).toThrow();
  });
});

describe('kindOfObjectBytes', () => {
  it('names the kind from the field tags, and refuses an object that sets two members of the oneof', () => {
    expect(kindOfObjectBytes(ApiObject.encode({ pod }).finish())?.kind).toBe('Pod');
    // An Event, then a Pod: decoders disagree on which is the object, so neither is taken.
    const w = new BinaryWriter();
    ApiObject.encode({ event: { metadata: { name: 'e' } } }, w);
    ApiObject.encode({ pod }, w);
    expect(() => kindOfObjectBytes(w.finish())).toThrow(/sets several of ApiObject's fields \(event, pod\)/);
  });
});

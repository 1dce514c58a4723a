import { BinaryWriter } from '@bufbuild/protobuf/wire';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../client/api/errors.js';
import { decodeKubeProtobuf } from './protobuf.js';

/** `kubectl auth can-i get pods` (1.33) as sent on the wire, captured with -v=9. */
const CAN_I_GET_PODS = Buffer.from(
  '6b3873000a320a17617574686f72697a6174696f6e2e6b38732e696f2f76311217' +
    '53656c665375626a6563744163636573735265766965771' +
    '23c0a100a0012001a0022002a00320038004200121e0a1c0a0764656661756c741203676574' +
    '1a0022002a04706f6473320' +
    '03a001a08080012001a0020001a002200',
  'hex',
);

/** The envelope k8s.io/apimachinery writes: magic, then runtime.Unknown{typeMeta, raw}. */
function envelope(apiVersion: string, kind: string, raw: Uint8Array): Buffer {
  const w = new BinaryWriter();
  w.tag(1, 2).fork().tag(1, 2).string(apiVersion).tag(2, 2).string(kind).join();
  w.tag(2, 2).bytes(raw);
  return Buffer.concat([Buffer.from('k8s\0', 'latin1'), w.finish()]);
}

describe('Kubernetes protobuf request bodies', () => {
  it('reads what kubectl sends for auth can-i', () => {
    expect(decodeKubeProtobuf(CAN_I_GET_PODS)).toEqual({
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectAccessReview',
      metadata: {},
      spec: { resourceAttributes: { namespace: 'default', verb: 'get', resource: 'pods' } },
    });
  });

  it('keeps a pointer field at its zero value: gracePeriodSeconds 0 means now', () => {
    const w = new BinaryWriter();
    w.tag(1, 0).int64(0);
    w.tag(2, 2).fork().tag(1, 2).string('uid-1').join();
    w.tag(4, 2).string('Foreground');
    w.tag(5, 2).string('All');
    const eviction = new BinaryWriter();
    eviction.tag(1, 2).fork().tag(1, 2).string('web').tag(3, 2).string('default').join();
    eviction.tag(2, 2).bytes(w.finish());
    expect(decodeKubeProtobuf(envelope('policy/v1', 'Eviction', eviction.finish()))).toEqual({
      apiVersion: 'policy/v1',
      kind: 'Eviction',
      metadata: { name: 'web', namespace: 'default' },
      deleteOptions: {
        gracePeriodSeconds: 0,
        preconditions: { uid: 'uid-1' },
        propagationPolicy: 'Foreground',
        dryRun: ['All'],
      },
    });
  });

  it('reads a Namespace with labels, skipping fields it does not know', () => {
    const meta = new BinaryWriter();
    meta.tag(1, 2).string('lab');
    meta.tag(11, 2).fork().tag(1, 2).string('team').tag(2, 2).string('home').join();
    meta.tag(99, 0).int32(7);
    const ns = new BinaryWriter();
    ns.tag(1, 2).bytes(meta.finish());
    expect(decodeKubeProtobuf(envelope('v1', 'Namespace', ns.finish()))).toEqual({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'lab', labels: { team: 'home' } },
    });
  });

  it('reads a Deployment as kubectl create deployment sends it: zero values dropped, int-or-string converted', () => {
    const container = new BinaryWriter();
    container.tag(1, 2).string('nginx').tag(2, 2).string('nginx:1');
    container.tag(5, 2).string(''); // workingDir "", written by Go's encoder
    container.tag(8, 2).bytes(new Uint8Array()); // resources {}
    container.tag(6, 2).fork().tag(3, 0).int32(80).tag(4, 2).string('TCP').join();
    const pod = new BinaryWriter();
    pod.tag(2, 2).bytes(container.finish());
    pod.tag(11, 0).bool(false); // hostNetwork false
    const template = new BinaryWriter();
    template.tag(1, 2).fork().tag(11, 2).fork().tag(1, 2).string('app').tag(2, 2).string('web').join().join();
    template.tag(2, 2).bytes(pod.finish());
    const spec = new BinaryWriter();
    spec.tag(1, 0).int32(0); // replicas 0 is kept: a pointer in Go
    spec.tag(2, 2).fork().tag(1, 2).fork().tag(1, 2).string('app').tag(2, 2).string('web').join().join();
    spec.tag(3, 2).bytes(template.finish());
    spec
      .tag(4, 2)
      .fork()
      .tag(1, 2)
      .string('RollingUpdate')
      .tag(2, 2)
      .fork()
      .tag(1, 2)
      .fork()
      .tag(1, 0)
      .int64(1)
      .tag(3, 2)
      .string('30%')
      .join()
      .tag(2, 2)
      .fork()
      .tag(2, 0)
      .int32(2)
      .join()
      .join()
      .join();
    const d = new BinaryWriter();
    d.tag(1, 2).fork().tag(1, 2).string('web').join();
    d.tag(2, 2).bytes(spec.finish());
    expect(decodeKubeProtobuf(envelope('apps/v1', 'Deployment', d.finish()))).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: {
        replicas: 0,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: {
            containers: [
              {
                name: 'nginx',
                image: 'nginx:1',
                resources: {},
                ports: [{ containerPort: 80, protocol: 'TCP' }],
              },
            ],
          },
        },
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '30%', maxSurge: 2 } },
      },
    });
  });

  it('refuses a pod template field it does not read rather than dropping it', () => {
    const container = new BinaryWriter();
    container.tag(1, 2).string('c').tag(9, 2).fork().tag(1, 2).string('data').join(); // volumeMounts
    const pod = new BinaryWriter();
    pod.tag(2, 2).bytes(container.finish());
    const template = new BinaryWriter();
    template.tag(2, 2).bytes(pod.finish());
    const spec = new BinaryWriter();
    spec.tag(3, 2).bytes(template.finish());
    const d = new BinaryWriter();
    d.tag(2, 2).bytes(spec.finish());
    expect(() => decodeKubeProtobuf(envelope('apps/v1', 'Deployment', d.finish()))).toThrow(
      'field 9 of spec.template.spec.containers is not read from protobuf here',
    );
  });

  it('reads a ConfigMap, its binaryData as base64 as in JSON', () => {
    const cm = new BinaryWriter();
    cm.tag(1, 2).fork().tag(1, 2).string('app').join();
    cm.tag(2, 2).fork().tag(1, 2).string('mode').tag(2, 2).string('dev').join();
    cm.tag(3, 2)
      .fork()
      .tag(1, 2)
      .string('logo.bin')
      .tag(2, 2)
      .bytes(new Uint8Array([0xff, 0xfe, 0, 1]))
      .join();
    cm.tag(4, 0).bool(true);
    expect(decodeKubeProtobuf(envelope('v1', 'ConfigMap', cm.finish()))).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'app' },
      data: { mode: 'dev' },
      binaryData: { 'logo.bin': '//4AAQ==' },
      immutable: true,
    });
  });

  it('asks for JSON for a kind it does not read from protobuf', () => {
    const err = (() => {
      try {
        decodeKubeProtobuf(envelope('v1', 'Pod', new Uint8Array()));
      } catch (e) {
        return e as ApiError;
      }
    })();
    expect(err?.reason).toBe('UnsupportedMediaType');
    expect(err?.message).toContain('send it as application/json');
  });

  it('refuses bytes that are not a Kubernetes protobuf message, naming the problem', () => {
    expect(() => decodeKubeProtobuf(Buffer.from('{"kind":"Pod"}'))).toThrow(/does not start with the bytes/);
    const truncated = CAN_I_GET_PODS.subarray(0, 40);
    expect(() => decodeKubeProtobuf(truncated)).toThrow(ApiError);
    const wrongWire = new BinaryWriter();
    wrongWire.tag(1, 0).int32(3);
    expect(() => decodeKubeProtobuf(envelope('v1', 'Namespace', wrongWire.finish()))).toThrow(
      /the message metadata sent with wire type 0/,
    );
  });

  it('counts values against the parse limits while it reads', () => {
    const meta = new BinaryWriter();
    for (let i = 0; i < 50; i++) meta.tag(14, 2).string(`f${i}`);
    const ns = new BinaryWriter();
    ns.tag(1, 2).bytes(meta.finish());
    const limits = {
      maxBytes: 1 << 20,
      maxDepth: 10,
      maxValues: 20,
      maxKeyLength: 100,
      maxYamlTokens: 1,
      maxYamlAliases: 1,
      maxDocuments: 1,
    };
    expect(() => decodeKubeProtobuf(envelope('v1', 'Namespace', ns.finish()), limits)).toThrow(
      /more than 20 values/,
    );
  });
});

import { describe, expect, it } from 'vitest';
import { decodeStored } from './codec.js';
import { freezeSharingStrings } from './sharedstrings.js';
import { freezeSharingWith } from './sharedversions.js';

/** A DaemonSet's pod as stored: only its name, uid and node differ from its siblings'. */
function storedPod(i: number): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `ds-${i}`,
      namespace: 'default',
      uid: `uid-${i}`,
      labels: { app: 'ds', 'pod-template-generation': '1' },
      managedFields: [
        {
          manager: 'kube-controller-manager',
          operation: 'Update',
          apiVersion: 'v1',
          time: '2026-12-07T01:00:00Z',
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:metadata': { 'f:labels': { 'f:app': {}, 'f:pod-template-generation': {} } },
            'f:spec': { 'f:containers': { 'k:{"name":"main"}': { '.': {}, 'f:image': {} } } },
          },
        },
      ],
    },
    spec: {
      containers: [{ name: 'main', image: 'busybox', ports: [{ containerPort: 80, protocol: 'TCP' }] }],
      tolerations: [
        { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' },
        { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute' },
      ],
      affinity: {
        nodeAffinity: { required: [{ matchFields: [{ key: 'metadata.name', values: [`node-${i}`] }] }] },
      },
      nodeName: `node-${i}`,
      priority: 0,
      enableServiceLinks: true,
    },
  });
}

type Pod = Record<string, any>;

describe('subtrees shared across objects', () => {
  it('gives two pods of one DaemonSet one copy of what they have in common, and each reads as stored', () => {
    const a = decodeStored(storedPod(1), 10) as unknown as Pod;
    const b = decodeStored(storedPod(2), 11) as unknown as Pod;
    expect(JSON.stringify(a)).toBe(
      JSON.stringify({
        ...JSON.parse(storedPod(1)),
        metadata: { ...JSON.parse(storedPod(1)).metadata, resourceVersion: '10' },
      }),
    );
    expect(b.metadata.managedFields).toBe(a.metadata.managedFields);
    expect(b.spec.containers).toBe(a.spec.containers);
    expect(b.spec.tolerations).toBe(a.spec.tolerations);
    expect(b.metadata.labels).toBe(a.metadata.labels);
    // What differs is not shared, nor anything holding it.
    expect(b.spec).not.toBe(a.spec);
    expect(b.spec.affinity).not.toBe(a.spec.affinity);
    expect(b.spec.affinity.nodeAffinity.required[0].matchFields[0].values).toEqual(['node-2']);
    expect(Object.isFrozen(b.spec.tolerations[0])).toBe(true);
  });

  it('never shares what only looks alike: keys in another order, 1 and "1", an extra key, an array and an object', () => {
    const cases = [
      [
        { a: 1, b: 2 },
        { b: 2, a: 1 },
      ],
      [{ a: 1 }, { a: '1' }],
      [{ a: {} }, { a: {}, b: null }],
      [{ a: [] }, { a: {} }],
      [{ a: [1, 2] }, { a: [2, 1] }],
      [{ a: true }, { a: 'true' }],
      [{ x: 'y'.repeat(100) + 'a' }, { x: 'y'.repeat(100) + 'b' }],
    ];
    for (const [one, other] of cases) {
      const x = freezeSharingStrings(JSON.parse(JSON.stringify({ wrap: one })));
      const y = freezeSharingStrings(JSON.parse(JSON.stringify({ wrap: other })));
      expect(JSON.stringify(y)).toBe(JSON.stringify({ wrap: other }));
      expect(JSON.stringify(x)).toBe(JSON.stringify({ wrap: one }));
    }
  });

  it('holds for many distinct subtrees at once (slot collisions give each its own value back)', () => {
    const texts = Array.from({ length: 100_000 }, (_, i) =>
      JSON.stringify({ s: { n: i % 70_000, t: [i % 3, { k: `v${i % 1000}` }] } }),
    );
    const objects = texts.map((t) => freezeSharingStrings(JSON.parse(t)));
    objects.forEach((o, i) => expect(JSON.stringify(o)).toBe(texts[i]));
  });

  it('shares a part new in one version with the same part of other objects', () => {
    const before = decodeStored(JSON.stringify({ metadata: { name: 'p' }, spec: { a: 1 } }), 1);
    const other = decodeStored(
      JSON.stringify({
        metadata: { name: 'q' },
        status: { conditions: [{ type: 'Ready', status: 'True' }] },
      }),
      2,
    ) as Pod;
    const after = freezeSharingWith(
      JSON.parse(
        JSON.stringify({
          metadata: { name: 'p' },
          spec: { a: 1 },
          status: { conditions: [{ type: 'Ready', status: 'True' }] },
        }),
      ),
      before,
    ) as Pod;
    expect(after.spec).toBe((before as Pod).spec);
    expect(after.status.conditions).toBe(other.status.conditions);
  });

  it('does not share a large subtree across objects, so a slot never keeps much alive', () => {
    const text = (name: string) =>
      JSON.stringify({ metadata: { name, labels: { app: 'big' } }, data: { blob: 'z'.repeat(4096) } });
    const a = decodeStored(text('a'), 1) as unknown as Pod;
    const b = decodeStored(text('b'), 2) as unknown as Pod;
    expect(b.data).not.toBe(a.data);
    expect(b.metadata.labels).toBe(a.metadata.labels);
    expect(JSON.stringify(b)).toBe(
      JSON.stringify({
        ...JSON.parse(text('b')),
        metadata: { name: 'b', labels: { app: 'big' }, resourceVersion: '2' },
      }),
    );
  });
});

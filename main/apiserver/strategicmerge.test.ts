import { describe, expect, it } from 'vitest';
import { isApiError } from '../../client/api/errors.js';
import { twoWayMergePatch } from '../../client/api/strategicdiff.js';
import { applyStrategicMergePatch } from './strategicmerge.js';

const pod = () => ({
  metadata: { name: 'p', labels: { app: 'web', tier: 'a' }, finalizers: ['x', 'y'] },
  spec: {
    containers: [
      { name: 'web', image: 'nginx:1', env: [{ name: 'A', value: '1' }], ports: [{ containerPort: 80 }] },
      { name: 'side', image: 'busybox' },
    ],
    tolerations: [{ key: 'a', operator: 'Exists' }],
  },
  status: {
    conditions: [
      { type: 'Ready', status: 'False' },
      { type: 'PodScheduled', status: 'True' },
    ],
  },
});

describe('strategic merge patch', () => {
  it('merges containers by name, their env by name and ports by containerPort, keeping the rest', () => {
    const out = applyStrategicMergePatch('Pod', pod(), {
      spec: {
        containers: [
          {
            name: 'web',
            image: 'nginx:2',
            env: [{ name: 'B', value: '2' }],
            ports: [{ containerPort: 443 }],
          },
        ],
      },
    }) as ReturnType<typeof pod>;
    expect(out.spec.containers).toEqual([
      {
        name: 'web',
        image: 'nginx:2',
        env: [
          { name: 'A', value: '1' },
          { name: 'B', value: '2' },
        ],
        ports: [{ containerPort: 80 }, { containerPort: 443 }],
      },
      { name: 'side', image: 'busybox' },
    ]);
  });

  it('deletes an item with $patch: delete, replaces a list with $patch: replace, and replaces lists without a strategy', () => {
    const deleted = applyStrategicMergePatch('Pod', pod(), {
      spec: {
        containers: [{ name: 'side', $patch: 'delete' }],
        tolerations: [{ key: 'b', operator: 'Exists' }],
      },
    }) as ReturnType<typeof pod>;
    expect(deleted.spec.containers.map((c) => c.name)).toEqual(['web']);
    expect(deleted.spec.tolerations).toEqual([{ key: 'b', operator: 'Exists' }]);
    const replaced = applyStrategicMergePatch('Pod', pod(), {
      spec: { containers: [{ name: 'only', image: 'x' }, { $patch: 'replace' }] },
    }) as ReturnType<typeof pod>;
    expect(replaced.spec.containers).toEqual([{ name: 'only', image: 'x' }]);
  });

  it('merges conditions by type, finalizers as a set, and honours the directives kubectl sends', () => {
    const out = applyStrategicMergePatch('Pod', pod(), {
      metadata: {
        labels: { tier: null, new: 'yes' },
        finalizers: ['z'],
        '$deleteFromPrimitiveList/finalizers': ['x'],
      },
      status: {
        conditions: [{ type: 'Ready', status: 'True' }],
        '$setElementOrder/conditions': [{ type: 'Ready' }],
      },
    }) as ReturnType<typeof pod> & { metadata: { labels: Record<string, string> } };
    expect(out.metadata.labels).toEqual({ app: 'web', new: 'yes' });
    expect(out.metadata.finalizers).toEqual(['y', 'z']);
    expect(out.status.conditions).toEqual([
      { type: 'Ready', status: 'True' },
      { type: 'PodScheduled', status: 'True' },
    ]);
    expect(JSON.stringify(out)).not.toContain('$');
  });

  it('keeps only the fields $retainKeys lists, and merges the pod template of a DaemonSet the same way', () => {
    const ds = {
      spec: {
        updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1 } },
        template: {
          spec: {
            containers: [
              { name: 'a', image: '1' },
              { name: 'b', image: '1' },
            ],
          },
        },
      },
    };
    const out = applyStrategicMergePatch('DaemonSet', ds, {
      spec: {
        updateStrategy: { type: 'OnDelete', $retainKeys: ['type'] },
        template: { spec: { containers: [{ name: 'b', image: '2' }] } },
      },
    }) as typeof ds;
    expect(out.spec.updateStrategy).toEqual({ type: 'OnDelete' });
    expect(out.spec.template.spec.containers).toEqual([
      { name: 'a', image: '1' },
      { name: 'b', image: '2' },
    ]);
  });

  it('refuses an item without its merge key, naming where', () => {
    let caught: unknown;
    try {
      applyStrategicMergePatch('Pod', pod(), { spec: { containers: [{ image: 'x' }] } });
    } catch (err) {
      caught = err;
    }
    expect(isApiError(caught, 'BadRequest')).toBe(true);
    expect((caught as Error).message).toContain('spec.containers[0]');
    expect((caught as Error).message).toContain('"name"');
  });
});

describe('$setElementOrder', () => {
  it('puts the merged list in the order the patch gives, even when the patch changes no item', () => {
    const out = applyStrategicMergePatch('Pod', pod(), {
      spec: { '$setElementOrder/containers': [{ name: 'side' }, { name: 'web' }] },
      metadata: { '$setElementOrder/finalizers': ['y', 'x'] },
    }) as ReturnType<typeof pod>;
    expect(out.spec.containers.map((c) => c.name)).toEqual(['side', 'web']);
    expect(out.metadata.finalizers).toEqual(['y', 'x']);
    expect(JSON.stringify(out)).not.toContain('$');
  });

  it("keeps an item only the server has ahead of the named items it came before (Kubernetes' interleaving)", () => {
    const node = { status: { conditions: ['A', 'B', 'C'].map((type) => ({ type, status: 'True' })) } };
    const out = applyStrategicMergePatch('Node', node, {
      status: {
        conditions: [{ type: 'D', status: 'False' }],
        '$setElementOrder/conditions': [{ type: 'C' }, { type: 'D' }, { type: 'A' }],
      },
    }) as typeof node;
    expect(out.status.conditions.map((c) => c.type)).toEqual(['B', 'C', 'D', 'A']);
  });

  it('orders a long list (50,000 items) without comparing every pair', () => {
    const names = Array.from({ length: 50_000 }, (_, i) => `c${i}`);
    const target = { spec: { containers: names.map((name) => ({ name })) } };
    const out = applyStrategicMergePatch('Pod', target, {
      spec: { '$setElementOrder/containers': [...names].reverse().map((name) => ({ name })) },
    }) as typeof target;
    expect(out.spec.containers[0].name).toBe('c49999');
    expect(out.spec.containers.at(-1)!.name).toBe('c0');
  });
});

describe('a two-way patch applied', () => {
  const node = () => ({
    metadata: { name: 'n1', labels: { a: '1', b: '2' }, finalizers: ['x', 'y'] },
    status: {
      addresses: [{ type: 'InternalIP', address: '10.0.0.1' }],
      allocatable: { cpu: '4', pods: '110' },
      conditions: [
        { type: 'MemoryPressure', status: 'False', lastHeartbeatTime: 't1' },
        { type: 'Ready', status: 'True', lastHeartbeatTime: 't1', reason: 'KubeletReady' },
      ],
      nodeInfo: { bootID: 'b1', kernelVersion: '6.1' },
    },
  });

  it.each([
    [
      'heartbeats',
      (n: ReturnType<typeof node>) => n.status.conditions.forEach((c) => (c.lastHeartbeatTime = 't2')),
    ],
    [
      'a removed label and finalizer',
      (n: ReturnType<typeof node>) => {
        delete (n.metadata.labels as Record<string, string>).b;
        n.metadata.finalizers = ['y', 'z'];
      },
    ],
    [
      'a removed condition and a new one',
      (n: ReturnType<typeof node>) => {
        n.status.conditions = [
          n.status.conditions[0],
          { type: 'PIDPressure', status: 'False', lastHeartbeatTime: 't2' },
        ];
      },
    ],
    [
      'a removed field of a condition, a changed map',
      (n: ReturnType<typeof node>) => {
        delete (n.status.conditions[1] as { reason?: string }).reason;
        n.status.allocatable = { cpu: '2', pods: '110' };
        n.status.nodeInfo.bootID = 'b2';
      },
    ],
  ])('takes the original to the modified object: %s', (_what, change) => {
    const modified = node();
    change(modified);
    const patch = twoWayMergePatch('Node', node(), modified);
    expect(applyStrategicMergePatch('Node', node(), patch)).toEqual(modified);
  });

  it('keeps what another writer changed in fields the patch does not name', () => {
    const modified = node();
    modified.status.conditions[1].lastHeartbeatTime = 't2';
    const patch = twoWayMergePatch('Node', node(), modified);
    const stored = node() as ReturnType<typeof node> & { status: { conditions: object[] } };
    stored.status.conditions.push({ type: 'NetworkUnavailable', status: 'False' });
    Object.assign(stored.metadata.labels, { rack: 'r1' });
    const out = applyStrategicMergePatch('Node', stored, patch) as typeof stored;
    expect(out.metadata.labels).toEqual({ a: '1', b: '2', rack: 'r1' });
    expect(out.status.conditions.map((c) => (c as { type: string }).type)).toEqual([
      'MemoryPressure',
      'Ready',
      'NetworkUnavailable',
    ]);
    expect(out.status.conditions[1]).toMatchObject({ lastHeartbeatTime: 't2', reason: 'KubeletReady' });
  });
});

import { describe, expect, it } from 'vitest';
import { twoWayMergePatch } from './strategicdiff.js';

const node = () => ({
  metadata: { name: 'n1', labels: { a: '1' }, finalizers: ['x'] },
  spec: { unschedulable: true },
  status: {
    capacity: { cpu: '4', memory: '8Gi' },
    conditions: [
      { type: 'MemoryPressure', status: 'False', lastHeartbeatTime: 't1' },
      { type: 'Ready', status: 'True', lastHeartbeatTime: 't1', reason: 'KubeletReady' },
    ],
    images: [{ names: ['a'] }],
  },
});

describe('two-way strategic merge patch', () => {
  it('is empty between equal objects', () => {
    expect(twoWayMergePatch('Node', node(), node())).toEqual({});
  });

  it('holds changed fields only, a changed list item as its key and its changes, in order', () => {
    const next = node();
    next.status.conditions[0].lastHeartbeatTime = 't2';
    next.status.conditions[1].lastHeartbeatTime = 't2';
    next.status.capacity.cpu = '8';
    expect(twoWayMergePatch('Node', node(), next)).toEqual({
      status: {
        capacity: { cpu: '8' },
        '$setElementOrder/conditions': [{ type: 'MemoryPressure' }, { type: 'Ready' }],
        conditions: [
          { type: 'MemoryPressure', lastHeartbeatTime: 't2' },
          { type: 'Ready', lastHeartbeatTime: 't2' },
        ],
      },
    });
  });

  it('sends a removed field as null, a new item whole and a removed one as $patch: delete', () => {
    const next = node() as ReturnType<typeof node> & {
      status: { conditions: Array<Record<string, string>> };
    };
    delete (next.status.conditions[1] as Record<string, string>).reason;
    next.status.conditions.splice(0, 1, { type: 'DiskPressure', status: 'False' });
    expect(twoWayMergePatch('Node', node(), next)).toEqual({
      status: {
        '$setElementOrder/conditions': [{ type: 'DiskPressure' }, { type: 'Ready' }],
        conditions: [
          { type: 'DiskPressure', status: 'False' },
          { type: 'Ready', reason: null },
          { type: 'MemoryPressure', $patch: 'delete' },
        ],
      },
    });
  });

  it('sends a list without a merge key whole, and a set of scalars as additions and deletions', () => {
    const next = node();
    next.status.images = [{ names: ['b'] }];
    next.metadata.finalizers = ['y'];
    expect(twoWayMergePatch('Node', node(), next)).toEqual({
      metadata: {
        '$setElementOrder/finalizers': ['y'],
        finalizers: ['y'],
        '$deleteFromPrimitiveList/finalizers': ['x'],
      },
      status: { images: [{ names: ['b'] }] },
    });
  });

  it('replaces a merge list whose items lack their key', () => {
    const next = node() as unknown as { status: { conditions: unknown[] } };
    next.status.conditions = [{ status: 'True' }];
    expect(twoWayMergePatch('Node', node(), next)).toEqual({
      status: { conditions: [{ status: 'True' }, { $patch: 'replace' }] },
    });
  });
});

import { describe, expect, it } from 'vitest';
import type { Node } from '../../client/api/types.js';
import { nodeStatusPatch } from './patch.js';

const node = (): Node => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name: 'n1', resourceVersion: '7' },
  spec: { unschedulable: true },
  status: {
    addresses: [
      { type: 'InternalIP', address: '10.0.0.1' },
      { type: 'Hostname', address: 'n1' },
    ],
    conditions: [{ type: 'Ready', status: 'True', lastHeartbeatTime: 't1' }],
  },
});

describe('the node status patch', () => {
  it('holds the status changes only: no resourceVersion, no spec', () => {
    const next = node();
    next.spec = {};
    next.status!.conditions![0].lastHeartbeatTime = 't2';
    expect(nodeStatusPatch(node(), next)).toEqual({
      status: {
        '$setElementOrder/conditions': [{ type: 'Ready' }],
        conditions: [{ type: 'Ready', lastHeartbeatTime: 't2' }],
      },
    });
  });

  it('replaces changed addresses whole, as the kubelet does (several may share a type)', () => {
    const next = node();
    next.status!.addresses = [
      { type: 'InternalIP', address: '10.0.0.2' },
      { type: 'InternalIP', address: 'fd00::2' },
    ];
    expect(nodeStatusPatch(node(), next)).toEqual({
      status: {
        addresses: [
          { type: 'InternalIP', address: '10.0.0.2' },
          { type: 'InternalIP', address: 'fd00::2' },
          { $patch: 'replace' },
        ],
      },
    });
  });

  it('sends first addresses as a merge', () => {
    const before = node();
    before.status!.addresses = [];
    expect(nodeStatusPatch(before, node()).status).toMatchObject({ addresses: node().status!.addresses });
  });
});

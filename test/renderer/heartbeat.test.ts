/**
 * The heartbeat the Nodes table and a node's page show: the node Lease's renewTime (renewed
 * every 10 s), not the Ready condition's lastHeartbeatTime (written every 5 minutes when
 * nothing changes), which stands in only for a node without a lease.
 */
import { describe, expect, it } from 'vitest';
import type { Lease, Node } from '../../client/api/types.js';
import { heartbeat, nodeLeaseKey } from '../../renderer/src/node/heartbeat.js';

const node: Node = {
  kind: 'Node',
  metadata: { name: 'pi' },
  status: {
    conditions: [
      { type: 'MemoryPressure', status: 'False', lastHeartbeatTime: '2026-05-01T09:59:00Z' },
      { type: 'Ready', status: 'True', lastHeartbeatTime: '2026-05-01T09:56:00Z' },
    ],
  },
};

const lease = (renewTime?: string): Lease => ({
  kind: 'Lease',
  metadata: { name: 'pi', namespace: 'kube-node-lease' },
  spec: { holderIdentity: 'pi', leaseDurationSeconds: 40, ...(renewTime ? { renewTime } : {}) },
});

describe('heartbeat', () => {
  it("follows the node's lease, however old the status heartbeat is", () => {
    expect(heartbeat(node, lease('2026-05-01T10:00:00.123456Z'))).toBe('2026-05-01T10:00:00.123456Z');
  });

  it('falls back to the Ready condition without a lease, or before the lease is first renewed', () => {
    expect(heartbeat(node, undefined)).toBe('2026-05-01T09:56:00Z');
    expect(heartbeat(node, lease())).toBe('2026-05-01T09:56:00Z');
    expect(heartbeat({ metadata: { name: 'new' } }, undefined)).toBeUndefined();
  });

  it("finds a node's lease in kube-node-lease under the node's name", () => {
    expect(nodeLeaseKey('pi')).toBe('kube-node-lease/pi');
  });
});

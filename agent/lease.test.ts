import { describe, expect, it } from 'vitest';
import { notFound } from '../client/api/errors.js';
import type { KubeObject, Lease } from '../client/api/types.js';
import type { Client } from '../client/client.js';
import { FakeClock } from '../client/util/clock.js';
import { nextTurn } from '../client/util/nextturn.js';
import { NodeLeaseController } from './lease.js';
import { quietLogger } from './logger.js';

/** An API holding the node and, once created, its Lease. */
function leaseApi(): Client {
  let lease: Lease | undefined;
  return {
    get: async (kind: string, name: string) => {
      if (kind === 'Node') return { metadata: { name, uid: 'node-uid' } };
      if (!lease) throw notFound('Lease', name, 'kube-node-lease');
      return structuredClone(lease);
    },
    create: async (obj: KubeObject) => (lease = structuredClone(obj) as Lease),
    update: async (obj: KubeObject) => (lease = structuredClone(obj) as Lease),
  } as unknown as Client;
}

describe('the node lease', () => {
  it('is renewed every 10 s plus up to 4 % at random, as the kubelet jitters it', async () => {
    const clock = new FakeClock();
    const renewedAt: number[] = [];
    const lease = new NodeLeaseController({
      client: leaseApi(),
      nodeName: 'n1',
      clock,
      logger: quietLogger(),
      leaseDurationSeconds: 40,
      renewMs: 10_000,
      onRenew: (at) => renewedAt.push(at),
    });
    void lease.run();
    for (let ms = 0; ms < 120_000; ms += 10) {
      clock.advance(10);
      await nextTurn();
    }
    await lease.stop();
    const gaps = renewedAt.slice(1).map((at, i) => at - renewedAt[i]);
    expect(gaps.length).toBeGreaterThanOrEqual(10);
    for (const gap of gaps) {
      expect(gap).toBeGreaterThanOrEqual(10_000);
      expect(gap).toBeLessThanOrEqual(10_410);
    }
    // Nodes answered together do not stay in step: the waits differ.
    expect(new Set(gaps).size).toBeGreaterThan(1);
  });
});

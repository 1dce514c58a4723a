import { describe, expect, it } from 'vitest';
import type { Identity, LocalApi } from '../../../client/api/local.js';
import type { KubeObject } from '../../../client/api/types.js';
import { FakeClock } from '../../../client/util/clock.js';
import { FlowControl } from './dispatcher.js';
import { admittedApi } from './inprocess.js';
import { CONTROLLER_MANAGER_USER, type FlowControlConfig } from './levels.js';

const level = { seats: 4, queueLength: 8, queueWaitMs: 10_000 };
const CONFIG: FlowControlConfig = {
  'node-high': level,
  system: level,
  'workload-high': { seats: 1, queueLength: 8, queueWaitMs: 10_000, yieldsTo: 'node-high' },
  'global-default': level,
};
const controllers: Identity = { name: CONTROLLER_MANAGER_USER, role: 'admin' };
const pod: KubeObject = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'default' } };

/** An apiserver whose creates run until the test ends them, and whose watches open at once. */
function heldApi() {
  const pending: Array<() => void> = [];
  const api = {
    create: () => new Promise<KubeObject>((resolve) => pending.push(() => resolve(pod))),
    watch: async () => ({ stop: () => undefined }),
  } as unknown as LocalApi;
  return { api, endNext: () => pending.shift()!() };
}

const flush = () => new Promise((r) => setImmediate(r));

describe('admittedApi', () => {
  it("seats the in-process controllers' calls in workload-high, and their watches nowhere", async () => {
    const fc = new FlowControl(CONFIG, new FakeClock());
    const { api, endNext } = heldApi();
    const admitted = admittedApi(api, fc);
    const first = admitted.create(controllers, { object: pod });
    const second = admitted.create(controllers, { object: pod });
    await flush();
    expect(fc.snapshot()['workload-high']).toEqual({ executing: 1, queued: 1, seats: 1 });
    expect(fc.snapshot()['global-default']).toEqual({ executing: 0, queued: 0, seats: 4 });
    // A watch is long-running: it opens with the level's one seat taken.
    await admitted.watch(controllers, { kind: 'Pod' } as never, {} as never);
    endNext();
    await first;
    await flush();
    expect(fc.snapshot()['workload-high']).toEqual({ executing: 1, queued: 0, seats: 1 });
    endNext();
    await second;
    expect(fc.snapshot()['workload-high']).toEqual({ executing: 0, queued: 0, seats: 1 });
  });
});

/**
 * syncNodes' slow start and burst limit, against a real control plane whose pod creates start
 * failing after the first k (as a quota would): the controller tries batches of 1, 2, 4, …,
 * stops after the first batch with a failure, and expects exactly the creates that succeeded;
 * at most 250 creates per sync.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../../client/api/errors.js';
import type { DaemonSet, KubeObject } from '../../../client/api/types.js';
import { SharedInformerFactory } from '../../../client/cache/factory.js';
import type { Client } from '../../../client/client.js';
import { EventRecorder } from '../../../client/events/recorder.js';
import { realClock } from '../../../client/util/clock.js';
import { DaemonSetController } from '../../../main/controllers/daemonset/controller.js';
import { slowStartBatches } from '../../../main/controllers/common/slowstart.js';
import { silentLogger } from '../../../main/logging.js';
import { startTestControlPlane, type TestControlPlane } from '../../support/controlplane.js';
import { eventually } from '../../support/wait.js';

describe('slowStartBatches', () => {
  it.each([
    [20, Infinity, [1, 2, 4, 8, 5], 0, 0],
    [20, 0, [1], 1, 19],
    [20, 3, [1, 2, 4], 4, 13],
    [20, 5, [1, 2, 4], 2, 13],
    [7, 3, [1, 2, 4], 4, 0],
    [0, 0, [], 0, 0],
  ])('%i creates, failing after %s: batches %j', async (count, okCount, batches, errors, skipped) => {
    let ok = 0;
    const result = await slowStartBatches(count, async () => {
      if (ok >= okCount) throw new Error('quota exceeded');
      ok++;
    });
    expect(result.batches).toEqual(batches);
    expect(result.errors).toHaveLength(errors);
    expect(result.skipped).toBe(skipped);
  });
});

let t: TestControlPlane;
let factory: SharedInformerFactory;
let controller: DaemonSetController;
/** Pod creates allowed before they fail; the batches the controller issued. */
let allowed: number;
let batches: number[];
let inFlight: number;

/** The real client, with pod creates failing once `allowed` is used up and batches recorded. */
function quotaClient(real: Client): Client {
  return new Proxy(real, {
    get(target, prop, receiver) {
      if (prop !== 'create') return Reflect.get(target, prop, receiver) as unknown;
      return async (obj: KubeObject, ...rest: unknown[]) => {
        if (obj.kind !== 'Pod')
          return (target.create as (...a: unknown[]) => Promise<KubeObject>)(obj, ...rest);
        if (inFlight === 0) batches.push(0);
        batches[batches.length - 1]++;
        inFlight++;
        try {
          // Refused as a server would refuse: after a round trip, not before the batch is out.
          await new Promise((r) => setImmediate(r));
          if (allowed <= 0) throw new ApiError('Forbidden', 'exceeded quota: pods');
          allowed--;
          return await target.create(obj);
        } finally {
          inFlight--;
        }
      };
    },
  });
}

function newController(informers: SharedInformerFactory): DaemonSetController {
  const real = t.cp.client();
  return new DaemonSetController({
    client: quotaClient(real),
    informers,
    clock: realClock,
    logger: silentLogger(),
    recorder: (component) => new EventRecorder(real, { component }),
  });
}

async function setUp(nodes: number): Promise<void> {
  const real = t.cp.client();
  const client = quotaClient(real);
  for (let i = 0; i < nodes; i += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, nodes - i) }, (_, j) =>
        real.create({ apiVersion: 'v1', kind: 'Node', metadata: { name: `n${i + j}` } }),
      ),
    );
  }
  await real.create<DaemonSet>({
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name: 'agent', namespace: 'default' },
    spec: {
      selector: { matchLabels: { app: 'agent' } },
      template: { metadata: { labels: { app: 'agent' } }, spec: { containers: [{ name: 'c', image: 'x' }] } },
    },
  });
  factory = new SharedInformerFactory(client);
  controller = newController(factory);
  factory.start();
  await factory.waitForCacheSync(10_000);
}

const podCount = async () => (await t.cp.client().list('Pod', { namespace: 'default' })).items.length;

beforeEach(async () => {
  t = await startTestControlPlane({ controllers: false });
  batches = [];
  inFlight = 0;
});

afterEach(async () => {
  await controller?.stop();
  factory?.shutdown();
  await t.close();
});

describe('syncNodes', () => {
  it('stops after the first failing batch and expects only what was created', async () => {
    await setUp(20);
    allowed = 3;
    // The informer stops here, so what the controller expects stays visible.
    factory.shutdown();
    await expect(controller.syncDaemonSet('default/agent')).rejects.toThrow(/4 of 20 pod writes failed/);
    expect(batches).toEqual([1, 2, 4]);
    // 20 expected, 4 failed and 13 skipped: 3 creations still to be seen.
    expect(controller.expectations.get('default/agent')).toEqual({ add: 3, del: 0 });
    expect(await podCount()).toBe(3);

    // A new informer sees the 3 pods, which satisfies the expectations.
    factory = new SharedInformerFactory(quotaClient(t.cp.client()));
    controller = newController(factory);
    controller.expectations.setExpectations('default/agent', 3, 0);
    factory.start();
    await factory.waitForCacheSync(10_000);
    await eventually(
      async () => controller.expectations.satisfiedExpectations('default/agent'),
      'the 3 to be seen',
    );
    allowed = Infinity;
    batches = [];
    await controller.syncDaemonSet('default/agent');
    expect(batches).toEqual([1, 2, 4, 8, 2]);
    expect(await podCount()).toBe(20);
  });

  it('while creations are not yet seen, only reports status', async () => {
    await setUp(5);
    allowed = Infinity;
    factory.shutdown(); // the cache stops seeing anything
    await controller.syncDaemonSet('default/agent');
    expect(await podCount()).toBe(5);
    batches = [];
    await controller.syncDaemonSet('default/agent');
    expect(batches).toEqual([]);
    expect(await podCount()).toBe(5);
  });

  it('creates at most 250 pods per sync', async () => {
    await setUp(300);
    allowed = Infinity;
    await controller.syncDaemonSet('default/agent');
    expect(batches).toEqual([1, 2, 4, 8, 16, 32, 64, 123]);
    expect(controller.expectations.get('default/agent')?.add).toBeLessThanOrEqual(250);
    expect(await podCount()).toBe(250);
    await eventually(
      async () => controller.expectations.satisfiedExpectations('default/agent'),
      'the 250 to be seen',
    );
    await controller.syncDaemonSet('default/agent');
    expect(await podCount()).toBe(300);
  }, 60_000);
});

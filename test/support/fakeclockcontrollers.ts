/**
 * Controllers run directly by a test on a fake clock against a real control plane (no
 * controllers of its own): the test plays the other parts (scheduler, agents), moves the clock,
 * and settles — the controllers idle, their events written, their caches caught up.
 */
import type { KindName } from '../../client/api/types.js';
import { SharedInformerFactory } from '../../client/cache/factory.js';
import type { Client } from '../../client/client.js';
import { EventRecorder } from '../../client/events/recorder.js';
import { FakeClock } from '../../client/util/clock.js';
import type { ControllerContext } from '../../main/controllers/types.js';
import { silentLogger } from '../../main/logging.js';
import { startTestControlPlane, type TestControlPlane } from './controlplane.js';
import { settleController } from './settle.js';

interface RunnableController {
  run(workers: number): void;
  stop(): Promise<void>;
  idle(): Promise<void>;
}

export interface FakeClockControllers<C extends RunnableController[]> {
  t: TestControlPlane;
  /** The in-process admin client. */
  c: Client;
  clock: FakeClock;
  controllers: C;
  /** Idle, events written, caches holding what the API holds. */
  settle(): Promise<void>;
  /** Moves the clock a second at a time, settling after each. */
  pass(seconds: number): Promise<void>;
  /** The messages of the events with this reason. */
  events(reason: string, namespace?: string): Promise<string[]>;
  stop(): Promise<void>;
}

export async function startFakeClockControllers<C extends RunnableController[]>(
  make: (ctx: ControllerContext) => C,
  kinds: readonly KindName[],
  clock = new FakeClock(Date.now()),
): Promise<FakeClockControllers<C>> {
  const t = await startTestControlPlane({ controllers: false });
  const c = t.cp.client();
  const factory = new SharedInformerFactory(c);
  const recorders: EventRecorder[] = [];
  const controllers = make({
    client: c,
    informers: factory,
    clock,
    logger: silentLogger(),
    recorder: (component) => {
      const r = new EventRecorder(c, { component }, { clock });
      recorders.push(r);
      return r;
    },
  });
  factory.start();
  await factory.waitForCacheSync(10_000);
  for (const controller of controllers) controller.run(2);
  const settle = () =>
    settleController({
      name: 'controllers under test',
      // Each one's work can wake another's: twice round.
      idle: async () => {
        for (let round = 0; round < 2; round++) for (const controller of controllers) await controller.idle();
      },
      flush: async () => {
        for (const r of recorders) await r.flush();
      },
      client: c,
      factory,
      kinds,
    });
  return {
    t,
    c,
    clock,
    controllers,
    settle,
    async pass(seconds) {
      for (let s = 0; s < seconds; s++) {
        clock.advance(1000);
        await settle();
      }
    },
    async events(reason, namespace = 'default') {
      return (await c.list('Event', { namespace })).items
        .filter((e) => e.reason === reason)
        .map((e) => e.message ?? '');
    },
    async stop() {
      for (const controller of controllers) await controller.stop();
      factory.shutdown();
      await t.close();
    },
  };
}

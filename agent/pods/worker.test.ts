import { describe, expect, it } from 'vitest';
import type { Pod, PodStatus } from '../../client/api/types.js';
import type { EventRecorder } from '../../client/events/recorder.js';
import { FakeClock } from '../../client/util/clock.js';
import { quietLogger } from '../logger.js';
import { HollowRuntime } from '../runtime/hollow.js';
import type { ContainerSpec, RunningContainer, Runtime } from '../runtime/types.js';
import { CrashLoopBackoff } from './backoff.js';
import { PodWorker } from './worker.js';

const pod: Pod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'two', namespace: 'default', uid: 'u1' },
  spec: {
    containers: [
      { name: 'first', command: ['serve'] },
      { name: 'second', command: ['serve'] },
    ],
  },
};

/** A hollow runtime whose start of `first` waits until the test lets it go on. */
class GatedRuntime extends HollowRuntime {
  readonly started: string[] = [];
  release!: () => void;
  private readonly gate = new Promise<void>((resolve) => (this.release = resolve));

  override async start(spec: ContainerSpec): Promise<RunningContainer> {
    this.started.push(spec.name);
    if (spec.name === 'first') await this.gate;
    return super.start(spec);
  }
}

describe('a pod deleted while its containers start', () => {
  it('starts none of the containers after the one being started, stops that one and hands the pod over for its final delete', async () => {
    const clock = new FakeClock();
    const runtime = new GatedRuntime(clock);
    const finalized: Array<{ pod: Pod; status: PodStatus }> = [];
    let finished: boolean | undefined;
    const events: string[] = [];
    const worker = new PodWorker(pod, {
      runtime,
      runtimeFor: async () => ({ runtime: runtime as Runtime, scheme: 'hollow' }),
      clock,
      logger: quietLogger(),
      recorder: {
        event: (_obj: unknown, _type: string, reason: string, message: string) =>
          events.push(`${reason}: ${message}`),
      } as unknown as EventRecorder,
      backoff: new CrashLoopBackoff(),
      hostIP: () => '10.0.0.7',
      admit: () => ({ admit: true }),
      publishStatus: () => undefined,
      finalizeDeletion: (p, status) => finalized.push({ pod: p, status }),
      startProbes: () => undefined,
      onFinished: (_uid, removedFromApi) => (finished = removedFromApi),
    });
    worker.update(pod);
    // The first container is being started when the deletion arrives.
    await new Promise((resolve) => setImmediate(resolve));
    expect(runtime.started).toEqual(['first']);
    worker.update({
      ...pod,
      metadata: {
        ...pod.metadata,
        deletionTimestamp: '2026-01-01T00:00:30Z',
        deletionGracePeriodSeconds: 30,
      },
    });
    runtime.release();
    await worker.settled();

    expect(runtime.started).toEqual(['first']);
    expect(events.filter((e) => e.includes('second'))).toEqual([]);
    expect(events).toContain('Killing: Stopping container first');
    expect(finished).toBe(false);
    expect(finalized).toHaveLength(1);
    expect(
      finalized[0].status.containerStatuses?.find((c) => c.name === 'first')?.state?.terminated,
    ).toBeTruthy();
  });
});

describe('a pod with activeDeadlineSeconds', () => {
  it('runs until the deadline (on the clock), then stops its containers and fails with DeadlineExceeded', async () => {
    const clock = new FakeClock();
    const runtime = new HollowRuntime(clock);
    const statuses: PodStatus[] = [];
    const events: string[] = [];
    const timed: Pod = { ...pod, spec: { ...pod.spec, activeDeadlineSeconds: 60 } };
    const worker = new PodWorker(timed, {
      runtime,
      runtimeFor: async () => ({ runtime: runtime as Runtime, scheme: 'hollow' }),
      clock,
      logger: quietLogger(),
      recorder: {
        event: (_obj: unknown, _type: string, reason: string, message: string) =>
          events.push(`${reason}: ${message}`),
      } as unknown as EventRecorder,
      backoff: new CrashLoopBackoff(),
      hostIP: () => '10.0.0.7',
      admit: () => ({ admit: true }),
      publishStatus: (_p, status) => statuses.push(status),
      finalizeDeletion: () => undefined,
      startProbes: () => undefined,
      onFinished: () => undefined,
    });
    worker.update(timed);
    await worker.settled();
    expect(statuses.at(-1)?.phase).toBe('Running');

    clock.advance(59_999);
    await worker.settled();
    expect(statuses.at(-1)?.phase).toBe('Running');

    clock.advance(1);
    await worker.settled();
    await new Promise((resolve) => setImmediate(resolve));
    await worker.settled();
    const last = statuses.at(-1)!;
    expect(last).toMatchObject({
      phase: 'Failed',
      reason: 'DeadlineExceeded',
      message: 'Pod was active on the node longer than the specified deadline',
    });
    expect(last.containerStatuses?.every((c) => c.state?.terminated)).toBe(true);
    expect(events).toContain(
      'DeadlineExceeded: Pod was active on the node longer than the specified deadline',
    );
    // Failed stays failed: nothing restarts.
    clock.advance(600_000);
    await worker.settled();
    expect(statuses.at(-1)?.phase).toBe('Failed');
  });
});

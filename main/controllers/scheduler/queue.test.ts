import { describe, expect, it } from 'vitest';
import type { Pod } from '../../../client/api/types.js';
import { FakeClock } from '../../../client/util/clock.js';
import { SchedulingQueue } from './queue.js';

const pod = (name: string, priority = 0, uid = name): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default', uid },
  spec: { priority, containers: [{ name: 'c', image: 'x' }] },
});

function setup() {
  const clock = new FakeClock(0);
  const queue = new SchedulingQueue({ clock });
  /** The next pod if one is ready now (never leaves a pop() waiting). */
  const popNow = async () => (queue.pending().active ? (await queue.pop())?.key : undefined);
  return { clock, queue, popNow };
}

describe('scheduling queue', () => {
  it('hands out higher priority first, then the oldest', async () => {
    const { clock, queue } = setup();
    queue.add(pod('a'));
    clock.advance(1);
    queue.add(pod('b', 10));
    clock.advance(1);
    queue.add(pod('c'));
    const order = [];
    for (let i = 0; i < 3; i++) order.push((await queue.pop())!.key);
    expect(order).toEqual(['default/b', 'default/a', 'default/c']);
  });

  it('parks an unschedulable pod until an event that may help it', async () => {
    const { clock, queue, popNow } = setup();
    queue.add(pod('big'));
    const q = (await queue.pop())!;
    queue.requeueUnschedulable(q, ['NodeResourcesFit']);
    expect(queue.pending()).toEqual({ active: 0, backoff: 0, unschedulable: 1 });
    queue.onClusterEvent('NodeLabelChange');
    expect(queue.pending().unschedulable).toBe(1);
    clock.advance(2_000); // past its 1 s backoff
    queue.onClusterEvent('AssignedPodDelete');
    expect(queue.pending()).toEqual({ active: 1, backoff: 0, unschedulable: 0 });
    expect(await popNow()).toBe('default/big');
  });

  it('a pod moved back while still backing off waits out its backoff', async () => {
    const { clock, queue, popNow } = setup();
    queue.add(pod('p'));
    const q = (await queue.pop())!;
    queue.requeueUnschedulable(q, ['TaintToleration']);
    queue.onClusterEvent('NodeAdd');
    expect(queue.pending()).toEqual({ active: 0, backoff: 1, unschedulable: 0 });
    clock.advance(999);
    expect(await popNow()).toBeUndefined();
    clock.advance(1);
    expect(await popNow()).toBe('default/p');
  });

  it('backs off 1 s doubling to 10 s', async () => {
    const { clock, queue } = setup();
    queue.add(pod('p'));
    const waits: number[] = [];
    for (let i = 0; i < 6; i++) {
      const q = (await queue.pop())!;
      const start = clock.now();
      queue.requeueAfterError(q);
      while (!queue.pending().active) clock.advance(100);
      waits.push(clock.now() - start);
    }
    expect(waits).toEqual([1000, 2000, 4000, 8000, 10000, 10000]);
  });

  it('a change during the attempt sends the pod to backoff, not to the parking lot', async () => {
    const { queue } = setup();
    queue.add(pod('p'));
    const q = (await queue.pop())!;
    queue.onClusterEvent('NodeAdd');
    queue.requeueUnschedulable(q, ['NodeResourcesFit']);
    expect(queue.pending()).toEqual({ active: 0, backoff: 1, unschedulable: 0 });

    queue.add(pod('u'));
    const u = (await queue.pop())!;
    queue.update({ ...pod('u'), metadata: { ...pod('u').metadata, labels: { x: 'y' } } });
    queue.requeueUnschedulable(u, ['NodeAffinity']);
    expect(queue.pending().unschedulable).toBe(0);
  });

  it('retries a parked pod after 5 minutes even without an event', async () => {
    const { clock, queue, popNow } = setup();
    queue.add(pod('p'));
    queue.requeueUnschedulable((await queue.pop())!, ['NodeAffinity']);
    clock.advance(4 * 60_000);
    expect(queue.pending().unschedulable).toBe(1);
    clock.advance(90_000);
    expect(queue.pending().unschedulable).toBe(0);
    expect(await popNow()).toBe('default/p');
  });

  it('forgets deleted pods, also while they are being tried', async () => {
    const { queue, popNow } = setup();
    queue.add(pod('a'));
    queue.add(pod('b'));
    queue.delete('default/b');
    const a = (await queue.pop())!;
    queue.delete('default/a');
    queue.requeueUnschedulable(a, []);
    expect(queue.pending()).toEqual({ active: 0, backoff: 0, unschedulable: 0 });
    expect(await popNow()).toBeUndefined();
    queue.close();
    expect(await queue.pop()).toBeUndefined();
  });
});

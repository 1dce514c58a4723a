import { describe, expect, it } from 'vitest';
import { ApiError, notFound } from '../../client/api/errors.js';
import type { Pod, PodCondition, PodStatus } from '../../client/api/types.js';
import type { Client } from '../../client/client.js';
import { FakeClock } from '../../client/util/clock.js';
import { nextTurn } from '../../client/util/nextturn.js';
import { quietLogger } from '../logger.js';
import { PodStatusManager } from './statusmanager.js';

/** One pod in a make-believe API whose calls can be made to fail. */
class FakeApi {
  pod: Pod | undefined;
  calls: string[] = [];
  /** Calls to fail, by verb, in order: each failure is used once. */
  failing: Record<string, ApiError[]> = {};

  constructor(pod: Pod) {
    this.pod = structuredClone(pod);
  }

  private fail(verb: string): void {
    this.calls.push(verb);
    const err = this.failing[verb]?.shift();
    if (err) throw err;
  }

  client(): Client {
    return {
      get: async (_kind: string, name: string) => {
        this.fail('get');
        if (!this.pod || this.pod.metadata?.name !== name) throw notFound('Pod', name, 'default');
        return structuredClone(this.pod);
      },
      updateStatus: async (pod: Pod) => {
        this.fail('updateStatus');
        if (!this.pod) throw notFound('Pod', pod.metadata!.name!, 'default');
        this.pod = { ...this.pod, status: structuredClone(pod.status) };
        return structuredClone(this.pod);
      },
      delete: async (_kind: string, name: string, options: { preconditions?: { uid?: string } }) => {
        this.fail('delete');
        if (!this.pod) throw notFound('Pod', name, 'default');
        if (options.preconditions?.uid !== this.pod.metadata?.uid) {
          throw new ApiError('Conflict', 'precondition failed: uid');
        }
        this.pod = undefined;
        return { object: {}, deleted: true };
      },
    } as unknown as Client;
  }
}

const unavailable = () => new ApiError('Unavailable', 'cannot reach the control plane');

const deleted: Pod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web', namespace: 'default', uid: 'u1', deletionTimestamp: '2026-01-01T00:00:00Z' },
  spec: { containers: [{ name: 'main' }] },
  status: { phase: 'Running' },
};

function manager(api: FakeApi, clock: FakeClock, cached = false): PodStatusManager {
  return new PodStatusManager({
    client: api.client(),
    clock,
    logger: quietLogger(),
    cached: () => (cached ? api.pod : undefined),
    // The resync must not be what retries the final delete here.
    resyncMs: 3_600_000,
    finalDeleteBackoff: { initialMs: 1_000, maxMs: 4_000 },
  });
}

/** Lets the manager's promise chains run (the fake API answers at once). */
async function flush(statuses: PodStatusManager): Promise<void> {
  for (let i = 0; i < 5; i++) {
    await nextTurn();
    await statuses.settled();
  }
}

describe('the final delete of a finished pod', () => {
  it('writes the last status, then deletes; a failed delete is tried again with back-off until the pod is gone', async () => {
    const api = new FakeApi(deleted);
    const clock = new FakeClock();
    const statuses = manager(api, clock);
    api.failing.delete = [unavailable(), unavailable(), unavailable()];
    statuses.finish(deleted, { phase: 'Failed' });
    await flush(statuses);
    expect(api.pod?.status?.phase).toBe('Failed');
    expect(api.calls.filter((c) => c === 'delete')).toHaveLength(1);
    expect(statuses.finishing('u1')).toBe(true);

    // 1 s, then 2 s, then 4 s (the most): a try at each.
    const triesAfter = async (ms: number) => {
      clock.advance(ms - 1);
      await flush(statuses);
      const before = api.calls.filter((c) => c === 'delete').length;
      clock.advance(1);
      await flush(statuses);
      return api.calls.filter((c) => c === 'delete').length - before;
    };
    expect(await triesAfter(1_000)).toBe(1);
    expect(await triesAfter(2_000)).toBe(1);
    expect(await triesAfter(4_000)).toBe(1);
    expect(api.pod).toBeUndefined();
    expect(statuses.finishing('u1')).toBe(false);
    expect(clock.pendingTimers()).toBe(1); // only the resync: no retry is left
    statuses.stop();
  });

  it('tries again at once when the pod is seen again, without waiting out its back-off', async () => {
    const api = new FakeApi(deleted);
    const clock = new FakeClock();
    const statuses = manager(api, clock);
    api.failing.delete = [unavailable()];
    statuses.finish(deleted);
    await flush(statuses);
    expect(api.pod).toBeDefined();
    statuses.finish(deleted);
    await flush(statuses);
    expect(api.pod).toBeUndefined();
    expect(api.calls.filter((c) => c === 'delete')).toHaveLength(2);
    statuses.stop();
  });

  it('keeps trying while the pod cannot even be read (the control plane is away)', async () => {
    const api = new FakeApi(deleted);
    const clock = new FakeClock();
    const statuses = manager(api, clock);
    api.failing.get = [unavailable(), unavailable()];
    statuses.finish(deleted);
    await flush(statuses);
    clock.advance(1_000);
    await flush(statuses);
    expect(api.pod).toBeDefined();
    clock.advance(2_000);
    await flush(statuses);
    expect(api.pod).toBeUndefined();
    statuses.stop();
  });

  it('is done when the name belongs to another pod now, which it never deletes', async () => {
    const api = new FakeApi({ ...deleted, metadata: { ...deleted.metadata, uid: 'u2' } });
    const clock = new FakeClock();
    const statuses = manager(api, clock);
    statuses.finish(deleted, { phase: 'Failed' });
    await flush(statuses);
    expect(api.pod?.metadata?.uid).toBe('u2');
    expect(api.calls).toEqual(['get']);
    expect(statuses.finishing('u1')).toBe(false);
    expect(clock.pendingTimers()).toBe(1);
    statuses.stop();
  });

  it('deletes the pod even when the API refuses its final status', async () => {
    const api = new FakeApi(deleted);
    const clock = new FakeClock();
    const statuses = manager(api, clock);
    api.failing.updateStatus = [new ApiError('Invalid', 'Pod "web" is invalid')];
    statuses.finish(deleted, { phase: 'Pending' });
    await flush(statuses);
    expect(api.pod).toBeUndefined();
    statuses.stop();
  });

  it('is done when the pod is gone already', async () => {
    const api = new FakeApi(deleted);
    api.pod = undefined;
    const clock = new FakeClock();
    const statuses = manager(api, clock);
    statuses.finish(deleted, { phase: 'Failed' });
    await flush(statuses);
    expect(statuses.finishing('u1')).toBe(false);
    expect(clock.pendingTimers()).toBe(1);
    statuses.stop();
  });
});

describe('status writes', () => {
  it("keep the conditions others wrote since the agent's last look", async () => {
    const disruption: PodCondition = {
      type: 'DisruptionTarget',
      status: 'True',
      reason: 'DeletionByTaintManager',
    };
    const running: Pod = {
      ...deleted,
      metadata: { name: 'web', namespace: 'default', uid: 'u1' },
      status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }, disruption] },
    };
    const api = new FakeApi(running);
    const clock = new FakeClock();
    const statuses = manager(api, clock, true);
    // What the worker computed from an older copy, without the DisruptionTarget.
    const wanted: PodStatus = { phase: 'Running', conditions: [{ type: 'Ready', status: 'False' }] };
    statuses.set(running, wanted);
    await flush(statuses);
    expect(api.pod?.status?.conditions).toEqual([{ type: 'Ready', status: 'False' }, disruption]);
    expect(statuses.inSync('u1')).toBe(true);
    statuses.stop();
  });
});

describe('the resync', () => {
  const running: Pod = {
    ...deleted,
    metadata: { name: 'web', namespace: 'default', uid: 'u1' },
    status: { phase: 'Pending' },
  };
  const wanted: PodStatus = { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] };
  /** A manager that reads the API's current copy as its cache and resyncs every 5 s. */
  const resyncing = () => {
    const api = new FakeApi(running);
    const clock = new FakeClock();
    const statuses = new PodStatusManager({
      client: api.client(),
      clock,
      logger: quietLogger(),
      cached: () => api.pod,
      resyncMs: 5_000,
    });
    return { api, clock, statuses };
  };

  it('writes nothing for a status the API already shows, however often it is published', async () => {
    const { api, clock, statuses } = resyncing();
    statuses.set(running, wanted);
    await flush(statuses);
    expect(api.calls).toEqual(['updateStatus']);
    for (let i = 0; i < 3; i++) {
      statuses.set(running, structuredClone(wanted));
      clock.advance(5_000);
      await flush(statuses);
    }
    expect(api.calls).toEqual(['updateStatus']);
    statuses.stop();
  });

  it('writes the status again when someone else changed it in the API', async () => {
    const { api, clock, statuses } = resyncing();
    statuses.set(running, wanted);
    await flush(statuses);
    clock.advance(5_000);
    await flush(statuses);
    expect(statuses.inSync('u1')).toBe(true);
    // Another writer sets the phase back: the cache now holds a new object.
    api.pod = { ...api.pod!, status: { phase: 'Pending' } };
    expect(statuses.inSync('u1')).toBe(false);
    clock.advance(5_000);
    await flush(statuses);
    expect(api.pod?.status).toEqual(wanted);
    expect(api.calls).toEqual(['updateStatus', 'updateStatus']);
    statuses.stop();
  });
});

/**
 * The one rule for sending a failed call again, and the two places that follow it: the typed
 * client's retries (retry.ts) and the failover between replicas (grpc/failover.ts).
 */
import { describe, expect, it } from 'vitest';
import { ApiError } from './api/errors.js';
import type { KubeObject, Node } from './api/types.js';
import { ApiClient, type Transport } from './client.js';
import { ConnectionError, type ConnectionFailure } from './grpc/connection.js';
import { FailoverTransport } from './grpc/failover.js';
import { mayResend, type RetryMode } from './resend.js';

function connectionFailure(failure: ConnectionFailure): ApiError {
  return new ConnectionError(failure, `connection ${failure}`);
}

const dropped = () => connectionFailure('unreachable'); // "Connection dropped": maybe applied
const refused = () => connectionFailure('refused'); // nothing listening: never sent
const timeout = () => new ApiError('Timeout', 'no answer in time');

describe('mayResend', () => {
  it('repeats reads after any failure that is not an answer', () => {
    for (const err of [dropped(), refused(), timeout(), new ApiError('Unavailable', 'store down')])
      expect(mayResend(err, 'read')).toBe(true);
  });

  it('repeats a write that may have been applied only when a second copy cannot apply it again', () => {
    expect(mayResend(dropped(), 'idempotent')).toBe(true);
    expect(mayResend(dropped(), 'once')).toBe(false);
    // A timeout hides whether the write happened: a repeat would report a false conflict.
    expect(mayResend(timeout(), 'idempotent')).toBe(false);
    expect(mayResend(timeout(), 'once')).toBe(false);
  });

  it('repeats any call the server refused before acting, or that never left the client', () => {
    for (const mode of ['read', 'idempotent', 'once'] as const) {
      expect(mayResend(new ApiError('TooManyRequests', 'slow down'), mode)).toBe(true);
      expect(mayResend(refused(), mode)).toBe(true);
      expect(mayResend(connectionFailure('certificate'), mode)).toBe(true);
    }
  });

  it('never repeats an answer', () => {
    for (const reason of ['Invalid', 'NotFound', 'Conflict', 'AlreadyExists', 'Forbidden'] as const)
      expect(mayResend(new ApiError(reason, 'no'), 'read')).toBe(false);
    expect(mayResend(new Error('not an API error'), 'read')).toBe(false);
  });
});

const node = (meta: Node['metadata']): Node => ({ apiVersion: 'v1', kind: 'Node', metadata: meta });

interface Write {
  what: string;
  /** What repeating it can do, by its request. */
  mode: RetryMode;
  /** The request as a transport gets it. */
  send(t: Transport): Promise<unknown>;
  /** The same request made through the typed client. */
  call(c: ApiClient): Promise<unknown>;
}

/** Every write of the Transport surface, with the mode its request implies. */
const writes: Write[] = [
  {
    what: 'a create with a name',
    mode: 'idempotent',
    send: (t) => t.create({ object: node({ name: 'n' }) }),
    call: (c) => c.create(node({ name: 'n' })),
  },
  {
    what: 'a generateName create',
    mode: 'once',
    send: (t) => t.create({ object: node({ generateName: 'n-' }) }),
    call: (c) => c.create(node({ generateName: 'n-' })),
  },
  {
    what: 'a manifest create',
    mode: 'once',
    send: (t) => t.create({ manifest: 'kind: Node' }),
    call: (c) => c.createManifest('kind: Node'),
  },
  {
    what: 'a pinned update',
    mode: 'idempotent',
    send: (t) => t.update({ object: node({ name: 'n', resourceVersion: '7' }) }),
    call: (c) => c.update(node({ name: 'n', resourceVersion: '7' })),
  },
  {
    what: 'an unpinned update',
    mode: 'once',
    send: (t) => t.update({ object: node({ name: 'n' }) }),
    call: (c) => c.update(node({ name: 'n' })),
  },
  {
    what: 'a pinned status update',
    mode: 'idempotent',
    send: (t) => t.updateStatus({ object: node({ name: 'n', resourceVersion: '7' }) }),
    call: (c) => c.updateStatus(node({ name: 'n', resourceVersion: '7' })),
  },
  {
    what: 'a patch',
    mode: 'once',
    send: (t) => t.patch({ kind: 'Node', name: 'n', patchType: 'merge', patch: '{}' }),
    call: (c) => c.patch('Node', 'n', {}),
  },
  {
    what: 'a delete with preconditions',
    mode: 'idempotent',
    send: (t) => t.delete({ kind: 'Node', name: 'n', preconditions: { uid: 'u' } }),
    call: (c) => c.delete('Node', 'n', { preconditions: { uid: 'u' } }),
  },
  {
    what: 'a plain delete',
    mode: 'once',
    send: (t) => t.delete({ kind: 'Node', name: 'n' }),
    call: (c) => c.delete('Node', 'n'),
  },
  {
    what: 'a bind',
    mode: 'once',
    send: (t) =>
      t.bind({ binding: { metadata: { name: 'p' }, target: { name: 'n' } }, namespace: 'default' }),
    call: (c) => c.bind('default', 'p', 'n'),
  },
];

/** A replica that fails its calls with `errors`, one each, then answers; it counts every call. */
function replica(errors: Array<() => ApiError> = []) {
  let calls = 0;
  const answer = async <T>(value: T): Promise<T> => {
    const err = errors[calls++];
    if (err) throw err();
    return value;
  };
  const object: KubeObject = node({ name: 'n' });
  const transport: Transport = {
    get: () => answer(object),
    list: () => answer({ items: [], resourceVersion: '1' }),
    watch: () => answer({ stop: () => undefined }),
    create: () => answer(object),
    update: () => answer(object),
    updateStatus: () => answer(object),
    patch: () => answer(object),
    delete: () => answer({ object, deleted: true }),
    bind: () => answer(object),
    logs: () => answer({ stop: () => undefined }),
    close: () => undefined,
  };
  return {
    transport,
    get calls() {
      return calls;
    },
  };
}

describe('the typed client', () => {
  it('retries exactly the writes whose request allows it, as the failover decides them', async () => {
    // The failover reads a write's mode from its request (resendModeOf); the typed client picks
    // it per call (client.ts). The failover tests below pin resendModeOf; this pins the client.
    for (const w of writes) {
      const r = replica([dropped]);
      const client = new ApiClient(r.transport, { attempts: 2, sleep: async () => undefined });
      await w.call(client).catch(() => undefined);
      expect(r.calls, w.what).toBe(w.mode === 'once' ? 1 : 2);
    }
  });
});

describe('failover', () => {
  it('sends a write that may have been applied to no other replica, and later calls go to the next', async () => {
    for (const w of writes.filter((x) => x.mode === 'once')) {
      const a = replica([dropped]);
      const b = replica();
      const failover = new FailoverTransport([a.transport, b.transport]);
      await expect(w.send(failover), w.what).rejects.toMatchObject({ reason: 'Unavailable' });
      expect(b.calls, `${w.what} was sent to the second replica`).toBe(0);
      expect(failover.current).toBe(1);
    }
  });

  it('sends no write on after a timeout, and reads after anything', async () => {
    for (const w of writes) {
      const a = replica([timeout]);
      const b = replica();
      await expect(w.send(new FailoverTransport([a.transport, b.transport])), w.what).rejects.toMatchObject({
        reason: 'Timeout',
      });
      expect(b.calls, w.what).toBe(0);
    }
    for (const err of [timeout, dropped, refused]) {
      const a = replica([err]);
      const b = replica();
      await new FailoverTransport([a.transport, b.transport]).get({ kind: 'Node', name: 'n' });
      expect(b.calls).toBe(1);
    }
  });

  it('sends an idempotent write on after a dropped connection, and any write that never left', async () => {
    for (const w of writes) {
      const a = replica([w.mode === 'idempotent' ? dropped : refused]);
      const b = replica();
      await w.send(new FailoverTransport([a.transport, b.transport]));
      expect([a.calls, b.calls], w.what).toEqual([1, 1]);
    }
  });

  it('tries each replica once, and returns an answer without moving on', async () => {
    const a = replica([refused]);
    const b = replica([refused]);
    const failover = new FailoverTransport([a.transport, b.transport]);
    await expect(failover.get({ kind: 'Node', name: 'n' })).rejects.toMatchObject({ reason: 'Unavailable' });
    expect([a.calls, b.calls]).toEqual([1, 1]);
    const c = replica([() => new ApiError('Conflict', 'answered')]);
    const d = replica();
    await expect(
      new FailoverTransport([c.transport, d.transport]).patch({ kind: 'Node', name: 'n' }),
    ).rejects.toMatchObject({
      reason: 'Conflict',
    });
    expect(d.calls).toBe(0);
  });
});

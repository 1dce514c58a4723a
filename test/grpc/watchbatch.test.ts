/**
 * Watch batching over the wire: a client that sets allowBatches gets the events that are ready
 * together in one message (the first event, the others as its `following`), in order; a client
 * that does not gets one event per message, as before. The typed client reads batches.
 */
import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { fromApiObject } from '../../client/api/kinds.js';
import type { Pod } from '../../client/api/types.js';
import { WatchEvent, WatchRequest } from '../../proto/gen/kubelab/v1/api.js';
import { startTestControlPlane, type TestControlPlane } from '../support/controlplane.js';

const pod = (name: string): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default' },
  spec: { containers: [{ name: 'c', command: ['sleep', '1'] }] },
});

let t: TestControlPlane | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

/** A watch made of raw messages, as any gRPC client sees them. */
function rawWatch(cp: TestControlPlane, req: WatchRequest) {
  const channel = new grpc.Client(
    `127.0.0.1:${cp.cp.port}`,
    grpc.credentials.createSsl(Buffer.from(cp.caPem)),
  );
  const md = new grpc.Metadata();
  md.set('authorization', `Bearer ${cp.cp.adminToken}`);
  const messages: WatchEvent[] = [];
  const call = channel.makeServerStreamRequest(
    '/kubelab.v1.Resources/Watch',
    (r: WatchRequest) => Buffer.from(WatchRequest.encode(r).finish()),
    (b: Buffer) => WatchEvent.decode(b),
    req,
    md,
  );
  call.on('data', (m: WatchEvent) => messages.push(m));
  call.on('error', () => undefined);
  const established = new Promise<void>((resolve) => call.on('metadata', () => resolve()));
  return {
    messages,
    established,
    /** Every event in the order it came, batches unpacked. */
    events: () => messages.flatMap((m) => [m, ...(m.following ?? [])]),
    close() {
      call.cancel();
      channel.close();
    },
  };
}

describe('watch batches', () => {
  it('sends events that are ready together in one message to a client that reads batches, one per message otherwise', async () => {
    t = await startTestControlPlane({ controllers: false });
    const client = t.client();
    const rv = (await client.list('Pod', { namespace: 'default' })).resourceVersion;
    const base = { kind: 'Pod', namespace: 'default', resourceVersion: rv } as WatchRequest;
    const batched = rawWatch(t, { ...base, allowBatches: true });
    const single = rawWatch(t, base);
    const typed = await client.watch('Pod', { namespace: 'default', resourceVersion: rv });
    try {
      await Promise.all([batched.established, single.established]);
      // Written together: the store commits them in few transactions, so the watch cache takes
      // many of them in one turn.
      const names = Array.from({ length: 200 }, (_, i) => `p-${String(i).padStart(3, '0')}`);
      await Promise.all(names.map((n) => client.create(pod(n))));
      await expect.poll(() => batched.events().length, { timeout: 10_000 }).toBe(200);
      await expect.poll(() => single.events().length, { timeout: 10_000 }).toBe(200);
      // The same events in the same order either way; batched, in fewer messages.
      const rvOf = (e: WatchEvent) => fromApiObject(e.object)?.object.metadata?.resourceVersion;
      const order = (evs: WatchEvent[]) => evs.map((e) => `${e.type} ${rvOf(e)}`);
      expect(order(batched.events())).toEqual(order(single.events()));
      const rvs = batched.events().map((e) => Number(rvOf(e)));
      expect(rvs).toEqual([...rvs].sort((a, b) => a - b));
      expect(batched.messages.length).toBeLessThan(200);
      expect(batched.messages.some((m) => (m.following?.length ?? 0) > 0)).toBe(true);
      // Nested batches never occur: a following event carries none of its own.
      expect(batched.messages.flatMap((m) => m.following ?? []).every((f) => !f.following?.length)).toBe(
        true,
      );
      expect(single.messages).toHaveLength(200);
      expect(single.messages.every((m) => !m.following?.length)).toBe(true);
      // The typed client asks for batches and hands out every event in order.
      const seen: string[] = [];
      for await (const ev of typed) {
        seen.push(ev.object.metadata!.name!);
        if (seen.length === 200) break;
      }
      expect(seen.sort()).toEqual(names);
    } finally {
      typed.stop();
      batched.close();
      single.close();
    }
  });
});

import { describe, expect, it } from 'vitest';
import { ListResponse, WatchEvent } from '../../proto/gen/kubelab/v1/api.js';
import type { Pod } from '../../client/api/types.js';
import type { CachedObject } from '../apiserver/watchcache.js';
import { encodedEntry, encodeList, encodeWatchEvent } from './wire.js';

const entry = (name: string, pad: number): CachedObject => ({
  key: `/registry/pods/default/${name}`,
  rv: 1,
  object: {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', annotations: { pad: 'x'.repeat(pad) } },
  } as Pod,
});

describe('wire encoding', () => {
  it('writes a ListResponse any protobuf decoder reads back, for small and large items', () => {
    const items = [entry('a', 0), entry('b', 200), entry('c', 70_000)];
    for (const list of [
      { items, resourceVersion: '42', continue: 'tok', remainingItemCount: 300 },
      { items, resourceVersion: '7' },
      { items: [], resourceVersion: '' },
    ]) {
      const decoded = ListResponse.decode(encodeList(list));
      expect(decoded.resourceVersion ?? '').toBe(list.resourceVersion);
      expect(decoded.continue ?? '').toBe(list.continue ?? '');
      expect(decoded.remainingItemCount).toBe(list.remainingItemCount);
      expect((decoded.items ?? []).map((i) => i.pod?.metadata?.annotations?.pad?.length)).toEqual(
        list.items.map((i) => (i.object.metadata?.annotations?.pad ?? '').length),
      );
    }
  });

  it('encodes a watch event once per type and shares it between watchers', () => {
    const e = entry('a', 10);
    const first = encodeWatchEvent({ type: 'ADDED', entry: e });
    expect(encodeWatchEvent({ type: 'ADDED', entry: e })).toBe(first);
    const modified = encodeWatchEvent({ type: 'MODIFIED', entry: e });
    expect(WatchEvent.decode(modified)).toMatchObject({
      type: 'MODIFIED',
      object: { pod: { metadata: { name: 'a' } } },
    });
    expect(WatchEvent.decode(first).type).toBe('ADDED');
    const bookmark = WatchEvent.decode(
      encodeWatchEvent({
        type: 'BOOKMARK',
        kind: 'Pod',
        apiVersion: 'v1',
        resourceVersion: '9',
        initialEventsEnd: true,
      }),
    );
    expect(bookmark.object?.pod?.metadata).toEqual({
      resourceVersion: '9',
      annotations: { 'k8s.io/initial-events-end': 'true' },
    });
  });

  it("keeps an object's bytes once: a list after a watch event reuses the event's tail", () => {
    const e = entry('shared', 300);
    const event = encodeWatchEvent({ type: 'MODIFIED', entry: e });
    const object = encodedEntry(e);
    expect(object.buffer).toBe(event.buffer);
    expect(event.subarray(event.length - object.length)).toEqual(object);
    const list = ListResponse.decode(encodeList({ items: [e], resourceVersion: '3' }));
    expect(list.items?.[0]?.pod?.metadata?.annotations?.pad).toHaveLength(300);
    // Another type of event for the same entry carries the same object.
    const deleted = WatchEvent.decode(encodeWatchEvent({ type: 'DELETED', entry: e }));
    expect(deleted.object?.pod?.metadata?.name).toBe('shared');
  });
});

/**
 * Events expire an hour after their last occurrence (Kubernetes' --event-ttl): the sweep
 * deletes those and keeps the rest, however many there are.
 */
import { afterEach, expect, it } from 'vitest';
import type { Event } from '../../client/api/types.js';
import { startTestApiServer, type TestApiServer } from '../support/apiserver.js';

let t: TestApiServer | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

function event(name: string, lastTimestamp: string | undefined, extra: Partial<Event> = {}): Event {
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name, namespace: 'default' },
    involvedObject: { kind: 'Pod', namespace: 'default', name: 'web' },
    reason: 'Started',
    message: 'Started container c',
    type: 'Normal',
    ...(lastTimestamp ? { lastTimestamp } : {}),
    ...extra,
  };
}

it('deletes events last seen over an hour ago and keeps the others, through a few thousand', async () => {
  t = await startTestApiServer();
  const clock = t.clock;
  const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
  const create = (events: Event[]) => Promise.all(events.map((e) => t!.admin.create(e)));
  const first = clock.now();
  await create(Array.from({ length: 2500 }, (_, i) => event(`old-${i}`, iso(first))));
  // Recorded when the others were, but seen again 30 minutes later (a series).
  await create([event('repeated', iso(first))]);
  clock.advance(30 * 60_000);
  await t.admin.patch(
    'Event',
    'repeated',
    { series: { count: 5, lastObservedTime: `${iso(clock.now()).slice(0, -1)}.000000Z` } },
    { namespace: 'default' },
  );
  await create(Array.from({ length: 300 }, (_, i) => event(`recent-${i}`, iso(clock.now()))));
  clock.advance(31 * 60_000);

  expect(await t.api.eventExpiry.sweep()).toBe(2500);
  const left = (await t.admin.list('Event', { namespace: 'default' })).items.map((e) => e.metadata!.name!);
  expect(left).toHaveLength(301);
  expect(left.every((n) => !n.startsWith('old-'))).toBe(true);
  expect(left).toContain('repeated');

  // Half an hour more: everything is over an hour old.
  clock.advance(30 * 60_000);
  expect(await t.api.eventExpiry.sweep()).toBe(301);
  expect((await t.admin.list('Event', { namespace: 'default' })).items).toEqual([]);
});

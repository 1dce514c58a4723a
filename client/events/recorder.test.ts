import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Node } from '../api/types.js';
import { startTestApiServer, type TestApiServer } from '../../test/support/apiserver.js';
import { EventRecorder } from './recorder.js';

let t: TestApiServer;
beforeEach(async () => {
  t = await startTestApiServer();
});
afterEach(async () => t.close());

const node: Node = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'pi-1', uid: 'uid-1' } };

describe('EventRecorder', () => {
  it('records an event about an object, with type, reason, message and source', async () => {
    const r = new EventRecorder(
      t.admin,
      { component: 'node-controller', host: 'laptop' },
      { clock: t.clock },
    );
    r.event(node, 'Normal', 'RegisteredNode', 'Node pi-1 event: Registered Node pi-1 in Controller');
    await r.flush();
    const [e] = (await t.admin.list('Event')).items;
    expect(e).toMatchObject({
      metadata: { namespace: 'default' },
      involvedObject: { kind: 'Node', name: 'pi-1', uid: 'uid-1', apiVersion: 'v1' },
      reason: 'RegisteredNode',
      type: 'Normal',
      count: 1,
      source: { component: 'node-controller', host: 'laptop' },
      firstTimestamp: '2026-11-29T10:00:00Z',
      lastTimestamp: '2026-11-29T10:00:00Z',
    });
  });

  it('aggregates repeats into one Event with a count and the last time', async () => {
    const r = new EventRecorder(t.admin, { component: 'kubelet' }, { clock: t.clock });
    for (let i = 0; i < 5; i++) {
      r.event(node, 'Warning', 'NodeNotReady', 'Node pi-1 status is now: NodeNotReady');
      t.clock.advance(10_000);
    }
    r.event(node, 'Normal', 'NodeReady', 'Node pi-1 status is now: NodeReady');
    await r.flush();
    const events = (await t.admin.list('Event')).items;
    expect(events).toHaveLength(2);
    const notReady = events.find((e) => e.reason === 'NodeNotReady')!;
    expect(notReady.count).toBe(5);
    expect(notReady.firstTimestamp).toBe('2026-11-29T10:00:00Z');
    expect(notReady.lastTimestamp).toBe('2026-11-29T10:00:40Z');
  });

  it('rate limits a source per object: a burst of 25, then one per 5 minutes', async () => {
    const r = new EventRecorder(t.admin, { component: 'flapper' }, { clock: t.clock });
    for (let i = 0; i < 40; i++) r.event(node, 'Normal', 'Flap', `flap ${i}`);
    await r.flush();
    expect((await t.admin.list('Event')).items).toHaveLength(25);
    t.clock.advance(5 * 60_000);
    r.event(node, 'Normal', 'Flap', 'after the pause');
    r.event(node, 'Normal', 'Flap', 'too soon');
    await r.flush();
    const messages = (await t.admin.list('Event')).items.map((e) => e.message);
    expect(messages).toContain('after the pause');
    expect(messages).not.toContain('too soon');
  });

  it('events expire an hour after they last happened', async () => {
    const r = new EventRecorder(t.admin, { component: 'c' }, { clock: t.clock });
    r.event(node, 'Normal', 'Old', 'old');
    await r.flush();
    t.clock.advance(30 * 60_000);
    r.event(node, 'Normal', 'Recent', 'recent');
    await r.flush();
    t.clock.advance(31 * 60_000);
    expect(await t.api.eventExpiry.sweep()).toBe(1);
    expect((await t.admin.list('Event')).items.map((e) => e.reason)).toEqual(['Recent']);
  });
});

/**
 * Editing a node's labels and taints from the node page, against a real control plane
 * through the bridge: the patches do what they say (and only that), and the server's own
 * validation errors land on the form field at fault.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Node } from '../../client/api/types.js';
import type { BridgeClient } from '../../renderer/src/bridge/client.js';
import {
  labelFormErrors,
  labelPatch,
  taintFormErrors,
  taintsPatch,
} from '../../renderer/src/node/nodeedits.js';
import { startTestControlPlane, type TestControlPlane } from '../support/controlplane.js';
import { loopbackBridge, rejection } from './loopback.js';

let t: TestControlPlane;
let bridge: BridgeClient;

beforeAll(async () => {
  t = await startTestControlPlane({ controllers: false });
  ({ bridge } = loopbackBridge(t));
  await t.cp.client().create<Node>({
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: 'pi', labels: { 'kubernetes.io/hostname': 'pi' } },
    spec: { taints: [{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }] },
  });
});
afterAll(() => t.close());

const get = () => bridge.request<Node>({ op: 'get', kind: 'Node', name: 'pi' });
const patch = (p: object) => bridge.request<Node>({ op: 'patch', kind: 'Node', name: 'pi', patch: p });

describe('labels', () => {
  it('sets and removes one label, leaving the others', async () => {
    await patch(labelPatch('topology.kubernetes.io/zone', 'attic'));
    expect((await get()).metadata?.labels).toEqual({
      'kubernetes.io/hostname': 'pi',
      'topology.kubernetes.io/zone': 'attic',
    });
    await patch(labelPatch('topology.kubernetes.io/zone', null));
    expect((await get()).metadata?.labels).toEqual({ 'kubernetes.io/hostname': 'pi' });
  });

  it("puts the server's complaint about a key at the key, and about a value at the value", async () => {
    const badKey = await rejection(patch(labelPatch('bad key!', 'ok')));
    const keyErrors = labelFormErrors(badKey.causes, 'bad key!', 'ok');
    expect(keyErrors.fields.key).toMatch(/^Invalid value: "bad key!": name part must consist of/);
    expect(keyErrors.fields.value).toBeUndefined();
    expect(keyErrors.other).toEqual([]);

    const badValue = await rejection(patch(labelPatch('zone', 'not ok!')));
    const valueErrors = labelFormErrors(badValue.causes, 'zone', 'not ok!');
    expect(valueErrors.fields.value).toMatch(/^Invalid value: "not ok!": a valid label must be/);
    expect(valueErrors.fields.key).toBeUndefined();
  });
});

describe('taints', () => {
  it('adds, replaces (same key and effect) and removes a taint, keeping the others', async () => {
    const now = new Date('2026-05-01T10:00:00Z');
    await patch(
      taintsPatch(await get(), { set: { key: 'dedicated', value: 'gpu', effect: 'NoSchedule' } }, now)!,
    );
    await patch(
      taintsPatch(await get(), { set: { key: 'dedicated', value: 'ml', effect: 'NoSchedule' } }, now)!,
    );
    await patch(taintsPatch(await get(), { set: { key: 'maintenance', effect: 'NoExecute' } }, now)!);
    expect((await get()).spec?.taints).toEqual([
      { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' },
      { key: 'dedicated', value: 'ml', effect: 'NoSchedule' },
      // Like kubectl taint, a NoExecute taint carries when it was added.
      { key: 'maintenance', effect: 'NoExecute', timeAdded: '2026-05-01T10:00:00Z' },
    ]);
    expect(
      taintsPatch(await get(), { set: { key: 'dedicated', value: 'ml', effect: 'NoSchedule' } }, now),
    ).toBeUndefined();

    await patch(taintsPatch(await get(), { remove: { key: 'maintenance', effect: 'NoExecute' } }, now)!);
    await patch(taintsPatch(await get(), { remove: { key: 'dedicated', effect: 'NoSchedule' } }, now)!);
    expect((await get()).spec?.taints).toEqual([
      { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' },
    ]);
  });

  it('is pinned to the node it was computed from: a change made meanwhile is a conflict, not lost', async () => {
    const stale = await get();
    await patch(taintsPatch(stale, { set: { key: 'first', effect: 'NoSchedule' } }, new Date())!);
    const conflict = await rejection(
      patch(taintsPatch(stale, { set: { key: 'second', effect: 'NoSchedule' } }, new Date())!),
    );
    expect(conflict.reason).toBe('Conflict');
    expect((await get()).spec?.taints?.map((x) => x.key)).toContain('first');
    await patch(taintsPatch(await get(), { remove: { key: 'first', effect: 'NoSchedule' } }, new Date())!);
  });

  it("puts the server's complaint about a taint's key or value at that field", async () => {
    const bad = await rejection(
      patch(
        taintsPatch(
          await get(),
          { set: { key: '-oops', value: 'bad value!', effect: 'NoSchedule' } },
          new Date(),
        )!,
      ),
    );
    const errors = taintFormErrors(bad.causes);
    expect(errors.fields.key).toMatch(/^Invalid value: "-oops": name part must consist of/);
    expect(errors.fields.value).toMatch(/^Invalid value: "bad value!"/);
    expect(errors.other).toEqual([]);
  });
});

import { expect, it } from 'vitest';
import { clone, deepEqual, deepFreeze } from './objects.js';

it('copies a frozen object deeply into one that can be changed, keeping every key', () => {
  const pod = deepFreeze({
    metadata: { name: 'web', labels: { app: 'web' }, annotations: undefined },
    spec: { containers: [{ name: 'main', command: ['sleep', '1'], ports: [] as number[] }] },
    status: { phase: 'Running', hostIP: null, conditions: [{ type: 'Ready', status: 'True' }] },
  });
  const copy = clone(pod);
  expect(copy).toStrictEqual(pod);
  expect('annotations' in copy.metadata).toBe(true);
  copy.metadata.labels.app = 'changed';
  copy.spec.containers[0].command.push('more');
  copy.status.conditions[0].status = 'False';
  expect(pod.metadata.labels.app).toBe('web');
  expect(pod.spec.containers[0].command).toEqual(['sleep', '1']);
  expect(pod.status.conditions[0].status).toBe('True');
  expect(Object.isFrozen(copy.spec.containers[0])).toBe(false);
});

it('copies what is not plain data faithfully (dates, bytes)', () => {
  const at = new Date('2026-12-02T00:00:00Z');
  const copy = clone({ at, bytes: new Uint8Array([1, 2, 3]) });
  expect(copy.at).toBeInstanceOf(Date);
  expect(copy.at.getTime()).toBe(at.getTime());
  expect(copy.at).not.toBe(at);
  expect(copy.bytes).toEqual(new Uint8Array([1, 2, 3]));
});

it('tells JSON values apart as JSON does: keys, order of items, undefined members, types', () => {
  const pod = {
    metadata: { name: 'web', labels: { app: 'web', tier: 'front' } },
    spec: { containers: [{ name: 'main', ports: [80, 443] }], nodeName: null },
  };
  expect(deepEqual(pod, clone(pod))).toBe(true);
  expect(
    deepEqual(pod, { ...pod, metadata: { ...pod.metadata, labels: { tier: 'front', app: 'web' } } }),
  ).toBe(true);
  expect(
    deepEqual(pod, { ...pod, spec: { ...pod.spec, containers: [{ name: 'main', ports: [443, 80] }] } }),
  ).toBe(false);
  expect(deepEqual(pod, { ...pod, spec: { ...pod.spec, nodeName: undefined } })).toBe(false);
  expect(deepEqual({ a: 1 }, { a: 1, b: undefined })).toBe(false);
  expect(deepEqual({ a: 1, b: undefined }, { a: 1 })).toBe(false);
  expect(deepEqual({ a: 1 }, { a: '1' })).toBe(false);
  expect(deepEqual([1, 2], { 0: 1, 1: 2 })).toBe(false);
  expect(deepEqual([], [undefined])).toBe(false);
  expect(deepEqual(null, {})).toBe(false);
  expect(deepEqual(Number.NaN, Number.NaN)).toBe(true);
  expect(deepEqual(Object.assign(Object.create({ inherited: 1 }) as object, { a: 1 }), { a: 1 })).toBe(false);
});

it('compares what is not plain data as isDeepStrictEqual does (dates, bytes)', () => {
  const at = '2026-12-02T00:00:00Z';
  expect(deepEqual({ at: new Date(at) }, { at: new Date(at) })).toBe(true);
  expect(deepEqual({ at: new Date(at) }, { at: new Date(0) })).toBe(false);
  expect(deepEqual({ b: new Uint8Array([1, 2]) }, { b: new Uint8Array([1, 2]) })).toBe(true);
  expect(deepEqual({ b: new Uint8Array([1, 2]) }, { b: new Uint8Array([1, 3]) })).toBe(false);
});

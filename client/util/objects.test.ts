import { expect, it } from 'vitest';
import { clone, deepFreeze } from './objects.js';

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

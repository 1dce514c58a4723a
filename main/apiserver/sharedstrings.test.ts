import { describe, expect, it } from 'vitest';
import { decodeStored } from './codec.js';
import { freezeSharingStrings, sharedString } from './sharedstrings.js';

describe('shared strings', () => {
  it('gives back an equal string for everything, short or long, through slot collisions', () => {
    const inputs = Array.from({ length: 200_000 }, (_, i) => `value-${i % 70_000}-${'x'.repeat(i % 80)}`);
    for (const s of inputs) expect(sharedString(s)).toBe(s);
    expect(sharedString('')).toBe('');
    expect(sharedString('grüße 🚀')).toBe('grüße 🚀');
  });

  it('freezes a parsed object all the way down and keeps every value', () => {
    const text = JSON.stringify({
      metadata: { name: 'p', labels: { app: 'web' }, annotations: { long: 'y'.repeat(500) } },
      spec: { containers: [{ name: 'c', command: ['sleep', '1'], ports: [{ containerPort: 80 }] }] },
      status: { conditions: [{ type: 'Ready', status: 'True' }], phase: 'Running' },
      n: 3,
      ok: true,
      nothing: null,
    });
    const obj = freezeSharingStrings(JSON.parse(text));
    expect(JSON.stringify(obj)).toBe(text);
    expect(Object.isFrozen(obj)).toBe(true);
    expect(Object.isFrozen(obj.spec.containers[0].command)).toBe(true);
    expect(Object.isFrozen(obj.status.conditions[0])).toBe(true);
    expect(() => {
      (obj.metadata.labels as Record<string, string>).app = 'changed';
    }).toThrow();
  });

  it('does not let an own "__proto__" key change the object\'s prototype', () => {
    const obj = freezeSharingStrings(JSON.parse('{"a":"b","__proto__":{"polluted":"yes"}}'));
    expect(Object.getPrototypeOf(obj)).toBe(Object.prototype);
    expect((obj as { polluted?: string }).polluted).toBeUndefined();
    expect(Object.getOwnPropertyDescriptor(obj, '__proto__')?.value).toEqual({ polluted: 'yes' });
    expect(Object.isFrozen(Object.getOwnPropertyDescriptor(obj, '__proto__')?.value)).toBe(true);
  });

  it('is how stored objects come out of the store: stamped with their revision and frozen', () => {
    const pod = decodeStored(
      JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'a', namespace: 'default' } }),
      42,
    );
    expect(pod.metadata).toEqual({ name: 'a', namespace: 'default', resourceVersion: '42' });
    expect(Object.isFrozen(pod.metadata)).toBe(true);
  });
});

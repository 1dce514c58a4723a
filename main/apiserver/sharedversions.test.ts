import { describe, expect, it } from 'vitest';
import { freezeSharingStrings } from './sharedstrings.js';
import { freezeSharingWith } from './sharedversions.js';

const parse = (v: unknown) => JSON.parse(JSON.stringify(v)) as Record<string, any>;

describe('versions sharing what did not change', () => {
  const before = freezeSharingStrings(
    parse({
      metadata: {
        name: 'l',
        managedFields: [{ manager: 'agent', time: 't1', fieldsV1: { 'f:spec': { 'f:renewTime': {} } } }],
      },
      spec: { holderIdentity: 'n1', leaseDurationSeconds: 40, renewTime: 't1' },
      list: [1, 2, 3],
    }),
  );

  it('shares every unchanged subtree and reads exactly as parsed', () => {
    const text = JSON.stringify({
      metadata: {
        name: 'l',
        managedFields: [{ manager: 'agent', time: 't2', fieldsV1: { 'f:spec': { 'f:renewTime': {} } } }],
      },
      spec: { holderIdentity: 'n1', leaseDurationSeconds: 40, renewTime: 't2' },
      list: [1, 2, 3],
    });
    const after = freezeSharingWith(JSON.parse(text), before);
    expect(JSON.stringify(after)).toBe(text);
    expect(after.metadata.managedFields[0].fieldsV1).toBe(before.metadata.managedFields[0].fieldsV1);
    expect(after.list).toBe(before.list);
    expect(after.metadata.managedFields[0]).not.toBe(before.metadata.managedFields[0]);
    expect(after.spec).not.toBe(before.spec);
    expect(
      Object.isFrozen(after) && Object.isFrozen(after.spec) && Object.isFrozen(after.metadata.managedFields),
    ).toBe(true);
    // An identical version is the previous one, whole.
    expect(freezeSharingWith(parse(before), before)).toBe(before);
  });

  it('does not share where keys differ in order, number or presence, or arrays in length', () => {
    const reordered = freezeSharingWith(
      parse({ ...before, spec: { renewTime: 't1', holderIdentity: 'n1', leaseDurationSeconds: 40 } }),
      before,
    );
    expect(reordered.spec).not.toBe(before.spec);
    expect(Object.keys(reordered.spec)).toEqual(['renewTime', 'holderIdentity', 'leaseDurationSeconds']);
    const fewer = freezeSharingWith(
      parse({ ...before, spec: { holderIdentity: 'n1', leaseDurationSeconds: 40 } }),
      before,
    );
    expect(fewer.spec).toEqual({ holderIdentity: 'n1', leaseDurationSeconds: 40 });
    const longer = freezeSharingWith(parse({ ...before, list: [1, 2, 3, 4] }), before);
    expect(longer.list).toEqual([1, 2, 3, 4]);
    expect(longer.metadata).toBe(before.metadata);
    const typeChanged = freezeSharingWith(parse({ ...before, list: { 0: 1 } }), before);
    expect(typeChanged.list).toEqual({ 0: 1 });
  });

  it('does not let an own "__proto__" key change the object\'s prototype', () => {
    const prev = freezeSharingStrings(JSON.parse('{"a":"b","__proto__":{"polluted":"yes"}}'));
    const next = freezeSharingWith(JSON.parse('{"a":"b","__proto__":{"polluted":"yes"}}'), prev);
    expect(Object.getPrototypeOf(next)).toBe(Object.prototype);
    expect((next as { polluted?: string }).polluted).toBeUndefined();
    expect(Object.isFrozen(Object.getOwnPropertyDescriptor(next, '__proto__')?.value)).toBe(true);
  });
});

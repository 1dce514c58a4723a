import { describe, expect, it } from 'vitest';
import type { Node } from '../../client/api/types.js';
import { applyTaints, parseTaintSpecs } from './taint.js';

const node = (
  taints: Node['spec'] extends infer S ? (S extends { taints?: infer T } ? T : never) : never,
): Node => ({
  metadata: { name: 'n1' },
  spec: { taints },
});

describe('taint specs', () => {
  it('parses additions and removals as kubectl does', () => {
    expect(parseTaintSpecs(['a=b:NoSchedule', 'c:NoExecute', 'd:PreferNoSchedule-', 'e-'])).toEqual({
      add: [
        { key: 'a', value: 'b', effect: 'NoSchedule' },
        { key: 'c', effect: 'NoExecute' },
      ],
      remove: [{ key: 'd', effect: 'PreferNoSchedule' }, { key: 'e' }],
    });
  });

  it('rejects bad effects, keys and shapes', () => {
    expect(() => parseTaintSpecs(['a=b:Never'])).toThrow(/invalid taint effect "Never"/);
    expect(() => parseTaintSpecs(['a b=c:NoSchedule'])).toThrow(/invalid taint spec/);
    expect(() => parseTaintSpecs(['just-a-key'])).toThrow(/use key=value:Effect/);
  });

  it('adds, overwrites only when allowed, and removes by key and effect or by key', () => {
    const n = node([
      { key: 'a', value: 'b', effect: 'NoSchedule' },
      { key: 'a', effect: 'NoExecute' },
    ]);
    expect(applyTaints(n, parseTaintSpecs(['a=b:NoSchedule']), false).outcome).toBe('not tainted');
    expect(() => applyTaints(n, parseTaintSpecs(['a=c:NoSchedule']), false)).toThrow(/--overwrite is false/);
    expect(applyTaints(n, parseTaintSpecs(['a=c:NoSchedule']), true).taints).toEqual([
      { key: 'a', effect: 'NoExecute' },
      { key: 'a', value: 'c', effect: 'NoSchedule' },
    ]);
    expect(applyTaints(n, parseTaintSpecs(['a:NoExecute-']), false)).toEqual({
      taints: [{ key: 'a', value: 'b', effect: 'NoSchedule' }],
      outcome: 'untainted',
    });
    expect(applyTaints(n, parseTaintSpecs(['a-']), false).taints).toEqual([]);
    expect(() => applyTaints(n, parseTaintSpecs(['z-']), false)).toThrow(/taint "z" not found/);
  });
});

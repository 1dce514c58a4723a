import { describe, expect, it } from 'vitest';
import { swapTaints, tolerates, untoleratedTaints, withTaint, withoutTaint } from './taints.js';

const unreachable = { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' };
const gpu = { key: 'dedicated', value: 'gpu', effect: 'NoSchedule' };

describe('tolerations', () => {
  it.each([
    [{ key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' }, gpu, true],
    [{ key: 'dedicated', value: 'gpu' }, gpu, true],
    [{ key: 'dedicated', value: 'cpu' }, gpu, false],
    [{ key: 'dedicated', operator: 'Exists' }, gpu, true],
    [{ key: 'dedicated', operator: 'Exists', effect: 'NoExecute' }, gpu, false],
    [{ operator: 'Exists' }, gpu, true],
    [{ operator: 'Exists', effect: 'NoSchedule' }, unreachable, false],
    [{ key: 'other', operator: 'Exists' }, gpu, false],
    [{ key: 'dedicated', operator: 'Gt', value: 'gpu' }, gpu, false],
  ])('%j tolerates %j: %s', (toleration, taint, expected) => {
    expect(tolerates(toleration, taint)).toBe(expected);
  });

  it('finds the taints nothing tolerates, by effect', () => {
    expect(
      untoleratedTaints(
        [gpu, unreachable],
        [{ key: 'dedicated', operator: 'Exists' }],
        ['NoSchedule', 'NoExecute'],
      ),
    ).toEqual([unreachable]);
    expect(untoleratedTaints([gpu, unreachable], [], ['NoExecute'])).toEqual([unreachable]);
  });

  it('adds, replaces and removes taints by key and effect', () => {
    const t = withTaint([gpu], { ...unreachable, timeAdded: '2026-01-01T00:00:00Z' });
    expect(t).toHaveLength(2);
    expect(withTaint(t, { ...gpu, value: 'tpu' })).toEqual([t[1], { ...gpu, value: 'tpu' }]);
    expect(withoutTaint(t, unreachable)).toEqual([gpu]);
  });
});

describe('swapTaints', () => {
  const notReady = { key: 'node.kubernetes.io/not-ready', effect: 'NoExecute' };
  it('adds and removes in one change, stamping NoExecute taints', () => {
    expect(swapTaints([gpu, unreachable], [notReady], [unreachable], '2026-01-01T00:00:00Z')).toEqual([
      gpu,
      { ...notReady, timeAdded: '2026-01-01T00:00:00Z' },
    ]);
  });
  it('says when nothing changes', () => {
    expect(swapTaints([gpu], [gpu], [unreachable], 'x')).toBeUndefined();
    expect(swapTaints(undefined, [], [gpu], 'x')).toBeUndefined();
  });
  it('keeps a taint that is already there as it is', () => {
    const stamped = { ...unreachable, timeAdded: 'earlier' };
    expect(swapTaints([stamped], [unreachable], [], 'now')).toBeUndefined();
  });
});

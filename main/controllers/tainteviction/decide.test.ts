import { describe, expect, it } from 'vitest';
import { decideEviction } from './decide.js';

const unreachable = { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' };
const notReady = { key: 'node.kubernetes.io/not-ready', effect: 'NoExecute' };
const tolerate = (taint: { key: string }, seconds?: number) => ({
  key: taint.key,
  operator: 'Exists',
  effect: 'NoExecute',
  ...(seconds !== undefined ? { tolerationSeconds: seconds } : {}),
});

describe('when a pod leaves a NoExecute-tainted node', () => {
  it('at once without a matching toleration', () => {
    expect(decideEviction([unreachable], [], undefined, 1000)).toEqual({
      action: 'schedule',
      eviction: { since: 1000, at: 1000 },
    });
  });
  it('after the shortest tolerationSeconds', () => {
    expect(
      decideEviction(
        [unreachable],
        [tolerate(unreachable, 300), { operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 60 }],
        undefined,
        0,
      ),
    ).toEqual({
      action: 'schedule',
      eviction: { since: 0, at: 60_000 },
    });
  });
  it('never when tolerated forever; a scheduled eviction is then cancelled', () => {
    expect(decideEviction([unreachable], [tolerate(unreachable)], undefined, 0)).toEqual({ action: 'keep' });
    expect(decideEviction([unreachable], [tolerate(unreachable)], { since: 0, at: 5 }, 1)).toEqual({
      action: 'cancel',
    });
  });
  it('cancels when the taints go', () => {
    expect(decideEviction([], [], { since: 0, at: 5 }, 1)).toEqual({ action: 'cancel' });
    expect(decideEviction([], [], undefined, 1)).toEqual({ action: 'keep' });
  });
  it('keeps counting from the first taint when unreachable becomes not-ready', () => {
    const scheduled = { since: 0, at: 300_000 };
    const tolerations = [tolerate(unreachable, 300), tolerate(notReady, 300)];
    expect(decideEviction([notReady], tolerations, scheduled, 100_000)).toEqual({ action: 'keep' });
  });
  it('moves the time when the toleration changes, from when the taint was first seen', () => {
    expect(
      decideEviction([unreachable], [tolerate(unreachable, 60)], { since: 0, at: 300_000 }, 10_000),
    ).toEqual({
      action: 'schedule',
      eviction: { since: 0, at: 60_000 },
    });
    expect(
      decideEviction([unreachable], [tolerate(unreachable, 5)], { since: 0, at: 300_000 }, 10_000),
    ).toEqual({
      action: 'schedule',
      eviction: { since: 0, at: 10_000 },
    });
  });
});

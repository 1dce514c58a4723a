import { describe, expect, it } from 'vitest';
import { decideEviction, matchingTolerations, minTolerationMs } from './decide.js';

const unreachable = { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' };
const notReady = { key: 'node.kubernetes.io/not-ready', effect: 'NoExecute' };
const tolerate = (taint: { key: string }, seconds?: number) => ({
  key: taint.key,
  operator: 'Exists',
  effect: 'NoExecute',
  ...(seconds !== undefined ? { tolerationSeconds: seconds } : {}),
});
const everything = (seconds?: number) => ({
  operator: 'Exists',
  ...(seconds !== undefined ? { effect: 'NoExecute', tolerationSeconds: seconds } : {}),
});

describe('when a pod leaves a NoExecute-tainted node', () => {
  it('at once without a matching toleration', () => {
    expect(decideEviction([unreachable], [], undefined, 1000)).toEqual({ action: 'schedule', at: 1000 });
    expect(decideEviction([unreachable, notReady], [tolerate(unreachable)], undefined, 1000)).toEqual({
      action: 'schedule',
      at: 1000,
    });
  });

  it("after the first matching toleration's seconds, not the shortest matching one", () => {
    expect(decideEviction([unreachable], [tolerate(unreachable, 300), everything(60)], undefined, 0)).toEqual(
      {
        action: 'schedule',
        at: 300_000,
      },
    );
    // The first match is forever: a later, shorter one does not count.
    expect(decideEviction([unreachable], [tolerate(unreachable), everything(60)], undefined, 0)).toEqual({
      action: 'keep',
    });
    expect(decideEviction([unreachable], [everything(60), tolerate(unreachable, 300)], undefined, 0)).toEqual(
      {
        action: 'schedule',
        at: 60_000,
      },
    );
  });

  it('after the shortest among the tolerations used for several taints', () => {
    expect(
      decideEviction(
        [unreachable, notReady],
        [tolerate(unreachable, 300), tolerate(notReady, 60)],
        undefined,
        0,
      ),
    ).toEqual({ action: 'schedule', at: 60_000 });
    // One taint tolerated forever, the other for a while: the while counts.
    expect(
      decideEviction([unreachable, notReady], [tolerate(unreachable), tolerate(notReady, 60)], undefined, 0),
    ).toEqual({ action: 'schedule', at: 60_000 });
  });

  it('at once when a toleration used has zero or negative seconds', () => {
    expect(decideEviction([unreachable], [tolerate(unreachable, -5)], undefined, 7)).toEqual({
      action: 'schedule',
      at: 7,
    });
  });

  it('never when tolerated forever; a scheduled eviction is then cancelled', () => {
    expect(decideEviction([unreachable], [tolerate(unreachable)], undefined, 0)).toEqual({ action: 'keep' });
    expect(decideEviction([unreachable], [tolerate(unreachable)], { at: 5 }, 1)).toEqual({
      action: 'cancel',
    });
  });

  it('cancels when the taints go', () => {
    expect(decideEviction([], [], { at: 5 }, 1)).toEqual({ action: 'cancel' });
    expect(decideEviction([], [], undefined, 1)).toEqual({ action: 'keep' });
  });

  it('keeps counting from the first taint when unreachable becomes not-ready', () => {
    const tolerations = [tolerate(unreachable, 300), tolerate(notReady, 300)];
    expect(decideEviction([notReady], tolerations, { at: 300_000 }, 100_000)).toEqual({ action: 'keep' });
  });

  it('keeps the time already scheduled when the toleration is lengthened or shortened', () => {
    const scheduled = { at: 300_000 };
    expect(decideEviction([unreachable], [tolerate(unreachable, 3600)], scheduled, 10_000)).toEqual({
      action: 'keep',
    });
    expect(decideEviction([unreachable], [tolerate(unreachable, 5)], scheduled, 10_000)).toEqual({
      action: 'keep',
    });
    expect(decideEviction([unreachable], [tolerate(unreachable, 0)], scheduled, 10_000)).toEqual({
      action: 'keep',
    });
  });

  it('brings a scheduled eviction forward to now when a taint is no longer tolerated', () => {
    expect(
      decideEviction([unreachable, notReady], [tolerate(unreachable, 300)], { at: 300_000 }, 10_000),
    ).toEqual({ action: 'schedule', at: 10_000 });
    // One already due is left to fire once.
    expect(decideEviction([unreachable], [], { at: 10_000 }, 10_000)).toEqual({ action: 'keep' });
  });
});

describe('matchingTolerations and minTolerationMs', () => {
  it('pick the first toleration per taint, in the order of the taints', () => {
    const a = tolerate(unreachable, 30);
    const b = everything(10);
    expect(matchingTolerations([notReady, unreachable], [a, b])).toEqual([b, a]);
    expect(matchingTolerations([notReady], [a])).toBeUndefined();
    expect(matchingTolerations([notReady], undefined)).toBeUndefined();
    expect(matchingTolerations([], undefined)).toEqual([]);
  });

  it('read forever as Infinity and anything not positive as 0', () => {
    expect(minTolerationMs([tolerate(unreachable)])).toBe(Infinity);
    expect(minTolerationMs([tolerate(unreachable), tolerate(notReady, 30)])).toBe(30_000);
    expect(minTolerationMs([tolerate(unreachable, 30), tolerate(notReady, 0)])).toBe(0);
  });
});

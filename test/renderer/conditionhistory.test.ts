/** A node's conditions over the time its page is open: transitions recorded and laid out on a bar. */
import { describe, expect, it } from 'vitest';
import { ConditionHistory, conditionHealth, layoutTrack } from '../../renderer/src/node/conditionhistory.js';

const t0 = Date.parse('2026-05-01T10:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString();

describe('ConditionHistory', () => {
  it('starts each condition at the page opening, Ready first', () => {
    const h = new ConditionHistory(t0);
    h.observe(
      [
        { type: 'MemoryPressure', status: 'False', lastTransitionTime: iso(t0 - 3_600_000) },
        { type: 'Ready', status: 'True', lastTransitionTime: iso(t0 - 3_600_000) },
      ],
      t0,
    );
    expect(h.list().map((t) => [t.type, t.segments])).toEqual([
      ['Ready', [{ status: 'True', from: t0, reason: undefined }]],
      ['MemoryPressure', [{ status: 'False', from: t0, reason: undefined }]],
    ]);
  });

  it("records a transition at the server's lastTransitionTime when it falls in the watched span, else when seen", () => {
    const h = new ConditionHistory(t0);
    h.observe([{ type: 'Ready', status: 'True' }], t0);
    expect(h.observe([{ type: 'Ready', status: 'True' }], t0 + 1000)).toBe(false);
    h.observe(
      [
        {
          type: 'Ready',
          status: 'Unknown',
          reason: 'NodeStatusUnknown',
          lastTransitionTime: iso(t0 + 50_000),
        },
      ],
      t0 + 52_000,
    );
    // A transition time from a skewed clock, before the last one: when we saw it instead.
    h.observe([{ type: 'Ready', status: 'True', lastTransitionTime: iso(t0 - 5_000) }], t0 + 90_000);
    expect(h.list()[0].segments).toEqual([
      { status: 'True', from: t0, reason: undefined },
      { status: 'Unknown', from: t0 + 50_000, reason: 'NodeStatusUnknown' },
      { status: 'True', from: t0 + 90_000, reason: undefined },
    ]);
    expect(h.list()[0].current.status).toBe('True');
  });

  it('lays the segments out in percent of the span from the opening to now', () => {
    const bars = layoutTrack(
      [
        { status: 'True', from: t0 },
        { status: 'False', from: t0 + 75_000 },
      ],
      t0,
      t0 + 100_000,
    );
    expect(bars.map((b) => [b.status, b.left, b.width])).toEqual([
      ['True', 0, 75],
      ['False', 75, 25],
    ]);
  });

  it('draws the ongoing status to the end of the bar, even the moment the page opens', () => {
    expect(layoutTrack([{ status: 'True', from: t0 }], t0, t0).map((b) => [b.left, b.width])).toEqual([
      [0, 100],
    ]);
  });

  it('knows good from bad: Ready=True is good, a pressure condition that is True is bad', () => {
    expect(conditionHealth('Ready', 'True')).toBe('good');
    expect(conditionHealth('Ready', 'False')).toBe('bad');
    expect(conditionHealth('DiskPressure', 'True')).toBe('bad');
    expect(conditionHealth('DiskPressure', 'False')).toBe('good');
    expect(conditionHealth('Ready', 'Unknown')).toBe('unknown');
  });
});

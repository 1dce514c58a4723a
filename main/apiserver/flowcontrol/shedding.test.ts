import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../../client/util/clock.js';
import {
  HEARTBEAT_BOUNDS,
  LoopDelaySampler,
  RECLAIM_BELOW_MS,
  RECOVER_BELOW_MS,
  SAMPLE_MS,
  SHED_ABOVE_MS,
  shedSeats,
  YIELD_ABOVE_MS,
} from './shedding.js';

describe('shedSeats', () => {
  it('halves the seats while the loop lags, down to an eighth of the nominal ones', () => {
    const lagging = SHED_ABOVE_MS + 1;
    expect(shedSeats(64, 64, lagging)).toBe(32);
    expect(shedSeats(32, 64, lagging)).toBe(16);
    expect(shedSeats(8, 64, lagging)).toBe(8);
    expect(shedSeats(1, 1, lagging)).toBe(1);
    expect(shedSeats(3, 3, lagging)).toBe(1);
  });

  it('takes back an eighth of the nominal seats per quiet sample, up to the nominal ones', () => {
    const quiet = RECOVER_BELOW_MS - 1;
    expect(shedSeats(8, 64, quiet)).toBe(16);
    expect(shedSeats(60, 64, quiet)).toBe(64);
    expect(shedSeats(64, 64, quiet)).toBe(64);
  });

  it('holds the seats where the loop is busy but not lagging', () => {
    expect(shedSeats(16, 64, (SHED_ABOVE_MS + RECOVER_BELOW_MS) / 2)).toBe(16);
  });

  it("follows another level's slowest request with the heartbeat bounds", () => {
    expect(shedSeats(256, 256, YIELD_ABOVE_MS + 1, HEARTBEAT_BOUNDS)).toBe(128);
    expect(shedSeats(32, 256, Infinity, HEARTBEAT_BOUNDS)).toBe(32);
    expect(shedSeats(128, 256, YIELD_ABOVE_MS, HEARTBEAT_BOUNDS)).toBe(128);
    expect(shedSeats(128, 256, RECLAIM_BELOW_MS - 1, HEARTBEAT_BOUNDS)).toBe(160);
    // Without bounds, the loop's: people's level sheds above 50 ms.
    expect(shedSeats(128, 256, SHED_ABOVE_MS + 1)).toBe(64);
  });
});

describe('LoopDelaySampler', () => {
  it("reports the loop's delay p99 of each sample, and nothing once stopped", async () => {
    const clock = new FakeClock();
    const reports: number[] = [];
    const sampler = new LoopDelaySampler(clock, (p99) => reports.push(p99));
    sampler.start();
    // The histogram's own timer must have ticked once to measure how late the next tick is.
    await new Promise((r) => setTimeout(r, 30));
    // The loop held for 300 ms: the sampler's histogram sees its timer fire that late.
    const until = performance.now() + 300;
    while (performance.now() < until);
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setTimeout(r, 30));
    clock.advance(SAMPLE_MS);
    expect(reports).toHaveLength(1);
    expect(reports[0]).toBeGreaterThanOrEqual(250);
    sampler.stop();
    clock.advance(SAMPLE_MS * 4);
    expect(reports).toHaveLength(1);
  });
});

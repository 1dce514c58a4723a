import { describe, expect, it } from 'vitest';
import { ageOf, humanDuration } from './age.js';

const s = 1000;
const m = 60 * s;
const h = 60 * m;
const d = 24 * h;

describe('humanDuration (kubectl duration.HumanDuration)', () => {
  it.each([
    [-2 * s, '<invalid>'],
    [-1 * s, '0s'],
    [-500, '0s'],
    [0, '0s'],
    [45 * s, '45s'],
    [119 * s, '119s'],
    [2 * m, '2m'],
    [5 * m + 10 * s, '5m10s'],
    [9 * m + 59 * s, '9m59s'],
    [10 * m + 30 * s, '10m'],
    [179 * m, '179m'],
    [3 * h, '3h'],
    [3 * h + 20 * m, '3h20m'],
    [7 * h + 59 * m, '7h59m'],
    [8 * h + 30 * m, '8h'],
    [47 * h, '47h'],
    [2 * d, '2d'],
    [2 * d + 5 * h, '2d5h'],
    [7 * d + 23 * h, '7d23h'],
    [8 * d + 5 * h, '8d'],
    [729 * d, '729d'],
    [2 * 365 * d, '2y'],
    [3 * 365 * d + 10 * d, '3y10d'],
    [8 * 365 * d + 10 * d, '8y'],
  ])('%i ms is %s', (ms, text) => {
    expect(humanDuration(ms)).toBe(text);
  });

  it('ages a timestamp against the given time, <unknown> when there is none', () => {
    const now = Date.parse('2026-01-01T12:00:00Z');
    expect(ageOf('2026-01-01T11:54:50Z', now)).toBe('5m10s');
    expect(ageOf(undefined, now)).toBe('<unknown>');
    expect(ageOf('yesterday', now)).toBe('<unknown>');
  });
});

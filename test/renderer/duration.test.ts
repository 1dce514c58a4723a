/** Token lifetimes as people type them, and expiry as people read it. */
import { describe, expect, it } from 'vitest';
import { expiresIn, parseDuration } from '../../renderer/src/util/duration.js';

describe('durations', () => {
  it('reads seconds, minutes, hours, days and "never"', () => {
    expect(['90', '90s', '30m', '24h', '7d', ' 2 h ', 'never', 'NEVER'].map(parseDuration)).toEqual([
      90, 90, 1800, 86400, 604800, 7200, 0, 0,
    ]);
  });

  it('refuses what is not a duration, and zero', () => {
    expect(['', 'soon', '1w', '-5m', '1.5h', '0', '0d'].map(parseDuration)).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });

  it('says when a token expires relative to now', () => {
    const now = Date.parse('2026-05-01T10:00:00Z');
    expect(expiresIn(undefined, now)).toBe('never');
    expect(expiresIn('2026-05-01T10:20:00Z', now)).toBe('in 20m');
    expect(expiresIn('2026-05-01T12:00:00Z', now)).toBe('in 2h');
    expect(expiresIn('2026-05-08T10:00:00Z', now)).toBe('in 7d');
    expect(expiresIn('2026-05-01T09:00:00Z', now)).toBe('expired');
  });
});

import { describe, expect, it } from 'vitest';
import { DEFAULT_NODE_LIFECYCLE } from './config.js';
import {
  computeZoneState,
  EXCLUDE_DISRUPTION_LABEL,
  evictionRate,
  isExcludedFromDisruptionChecks,
  zoneOf,
} from './zones.js';

const statuses = (ready: number, notReady: number, unknown = 0) => [
  ...Array<string>(ready).fill('True'),
  ...Array<string>(notReady).fill('False'),
  ...Array<string>(unknown).fill('Unknown'),
];

describe('zone states and eviction rates', () => {
  it.each([
    ['all ready', statuses(10, 0), 'Normal'],
    ['two of three down is still normal (fewer than 3)', statuses(1, 2), 'Normal'],
    ['3 of 6 is below 55 %', statuses(3, 3), 'Normal'],
    ['3 of 5 is 60 %', statuses(2, 2, 1), 'PartialDisruption'],
    ['every node down', statuses(0, 1, 3), 'FullDisruption'],
    ['a single node down', statuses(0, 0, 1), 'FullDisruption'],
  ])('%s → %s', (_what, zone, state) => {
    expect(computeZoneState(zone, DEFAULT_NODE_LIFECYCLE.unhealthyZoneThreshold).state).toBe(state);
  });

  it.each([
    ['Normal', 10, 0.1],
    ['Normal', 500, 0.1],
    ['PartialDisruption', 50, 0],
    ['PartialDisruption', 51, 0.01],
    ['FullDisruption', 10, 0.1],
    ['Initial', 10, 0.1],
  ] as const)('%s in a zone of %i nodes → %f nodes/s', (state, size, rate) => {
    expect(evictionRate(state, size, DEFAULT_NODE_LIFECYCLE)).toBe(rate);
  });

  it('keys zones by region and zone labels; no labels is one zone', () => {
    expect(zoneOf({ metadata: { labels: {} } })).toBe('');
    expect(zoneOf({ metadata: { labels: { 'topology.kubernetes.io/zone': 'rack-a' } } })).toBe('rack-a');
    expect(
      zoneOf({
        metadata: {
          labels: { 'topology.kubernetes.io/zone': 'rack-a', 'topology.kubernetes.io/region': 'home' },
        },
      }),
    ).toBe('home/rack-a');
  });

  it.each([
    ['an empty value', { [EXCLUDE_DISRUPTION_LABEL]: '' }, true],
    ['"true"', { [EXCLUDE_DISRUPTION_LABEL]: 'true' }, true],
    ['"false" (any value: only presence counts)', { [EXCLUDE_DISRUPTION_LABEL]: 'false' }, true],
    ['no such label', { 'kubernetes.io/hostname': 'n1' }, false],
    ['no labels at all', undefined, false],
  ])('a node with %s is excluded from disruption checks: %s', (_what, labels, excluded) => {
    expect(isExcludedFromDisruptionChecks({ metadata: { labels } })).toBe(excluded);
  });
});

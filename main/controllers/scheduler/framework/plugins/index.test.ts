import { describe, expect, it } from 'vitest';
import { DEFAULT_FILTERS, DEFAULT_SCORES } from './index.js';

describe('default plugins', () => {
  it('filters in Kubernetes order', () => {
    expect(DEFAULT_FILTERS.map((p) => p.name)).toEqual([
      'NodeUnschedulable',
      'NodeName',
      'TaintToleration',
      'NodeAffinity',
      'NodeResourcesFit',
    ]);
  });

  it('scores with Kubernetes default weights', () => {
    expect(DEFAULT_SCORES.map((p) => [p.name, p.weight])).toEqual([
      ['TaintToleration', 3],
      ['NodeAffinity', 2],
      ['NodeResourcesFit', 1],
      ['NodeResourcesBalancedAllocation', 1],
    ]);
  });
});

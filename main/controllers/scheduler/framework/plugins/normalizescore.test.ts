import { describe, expect, it } from 'vitest';
import { defaultNormalizeScore } from './normalizescore.js';

describe('defaultNormalizeScore', () => {
  it.each<[string, number[], boolean, number[]]>([
    ['no nodes', [], false, []],
    ['all zero stay zero', [0, 0, 0], false, [0, 0, 0]],
    ['all zero reversed are all max', [0, 0], true, [100, 100]],
    ['scaled by the highest', [0, 5, 10], false, [0, 50, 100]],
    ['integer division truncates', [1, 3], false, [33, 100]],
    ['reversed', [0, 1, 2], true, [100, 50, 0]],
    ['reversed after truncation', [1, 3], true, [67, 0]],
    ['already 0..100 stays put', [20, 100], false, [20, 100]],
    ['raw scores above 100 shrink', [150, 300], false, [50, 100]],
  ])('%s', (_name, scores, reverse, expected) => {
    defaultNormalizeScore(scores, reverse);
    expect(scores).toEqual(expected);
  });
});

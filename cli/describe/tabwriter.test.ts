import { describe, expect, it } from 'vitest';
import { alignTabs } from './tabwriter.js';

describe('alignTabs (Go text/tabwriter, padding 2)', () => {
  it('aligns a block of consecutive lines and restarts after a line without the column', () => {
    const text = [
      'Name:\tweb',
      'Namespace:\tdefault',
      'Containers:',
      '  app:',
      '    Image:\tx',
      '    Restart Count:\t0',
    ].join('\n');
    expect(alignTabs(text)).toBe(
      [
        'Name:       web',
        'Namespace:  default',
        'Containers:',
        '  app:',
        '    Image:          x',
        '    Restart Count:  0',
      ].join('\n'),
    );
  });

  it('never pads the last cell, and aligns every column of a table', () => {
    expect(alignTabs('Type\tReason\tMessage\nNormal\tStarted\tok\nWarning\tBackOff\tslow')).toBe(
      'Type     Reason   Message\nNormal   Started  ok\nWarning  BackOff  slow',
    );
  });
});

import { describe, expect, it } from 'vitest';
import { failureSummary, NO_NODES_AVAILABLE } from './summary.js';

const unreachable = 'node(s) had untolerated taint {node.kubernetes.io/unreachable: }';

describe('failureSummary', () => {
  it.each<[string, number, Array<[string, string[]]>, string]>([
    ['no nodes at all', 0, [], NO_NODES_AVAILABLE],
    [
      'reasons counted per node',
      5,
      [
        ['n1', ['Insufficient cpu']],
        ['n2', [unreachable]],
        ['n3', ['Insufficient cpu']],
        ['n4', [unreachable]],
        ['n5', [unreachable]],
      ],
      `0/5 nodes are available: 2 Insufficient cpu, 3 ${unreachable}.`,
    ],
    [
      'every reason of a node counts',
      2,
      [
        ['n1', ['Too many pods', 'Insufficient cpu', 'Insufficient memory']],
        ['n2', ['Insufficient cpu']],
      ],
      '0/2 nodes are available: 1 Insufficient memory, 1 Too many pods, 2 Insufficient cpu.',
    ],
    [
      'sorted as strings, not by count',
      12,
      [
        ...Array.from({ length: 10 }, (_, i): [string, string[]] => [
          `a${i}`,
          ['node(s) were unschedulable'],
        ]),
        ['b1', ['Insufficient cpu']],
        ['b2', ['Insufficient cpu']],
      ],
      '0/12 nodes are available: 10 node(s) were unschedulable, 2 Insufficient cpu.',
    ],
    [
      'upper case sorts before lower case, as bytes do',
      2,
      [
        ['n1', ["node(s) didn't match Pod's node affinity/selector"]],
        ['n2', ['Insufficient memory']],
      ],
      "0/2 nodes are available: 1 Insufficient memory, 1 node(s) didn't match Pod's node affinity/selector.",
    ],
    [
      'code point order beyond the BMP, as Go sorts UTF-8',
      2,
      [
        ['n1', ['\u{1F600}']],
        ['n2', ['\uFF01']],
      ],
      '0/2 nodes are available: 1 \uFF01, 1 \u{1F600}.',
    ],
    [
      'only the nodes that gave reasons are counted',
      4,
      [['n1', ['Insufficient cpu']]],
      '0/4 nodes are available: 1 Insufficient cpu.',
    ],
    ['nodes without reasons leave the list empty', 3, [['n1', []]], '0/3 nodes are available:'],
  ])('%s', (_name, total, reasons, expected) => {
    expect(failureSummary(total, new Map(reasons))).toBe(expected);
  });

  it('says there are no nodes in Kubernetes words', () => {
    expect(NO_NODES_AVAILABLE).toBe('no nodes available to schedule pods');
  });
});

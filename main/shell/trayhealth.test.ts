import { describe, expect, it } from 'vitest';
import type { Node } from '../../client/api/types.js';
import { countReady, isNodeReady, trayHealth } from './trayhealth.js';

const node = (name: string, ready?: 'True' | 'False' | 'Unknown'): Node => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name },
  ...(ready
    ? {
        status: {
          conditions: [
            { type: 'MemoryPressure', status: 'False' },
            { type: 'Ready', status: ready },
          ],
        },
      }
    : {}),
});

describe('isNodeReady', () => {
  it('is true only for a Ready condition that is True', () => {
    expect(isNodeReady(node('a', 'True'))).toBe(true);
    expect(isNodeReady(node('a', 'False'))).toBe(false);
    expect(isNodeReady(node('a', 'Unknown'))).toBe(false);
    expect(isNodeReady(node('a'))).toBe(false);
    expect(
      isNodeReady({ ...node('a'), status: { conditions: [{ type: 'DiskPressure', status: 'True' }] } }),
    ).toBe(false);
  });
});

describe('trayHealth', () => {
  it.each([
    ['before the first list', [], false, 'idle', 'kubelab — starting the control plane…'],
    ['without nodes', [], true, 'idle', 'kubelab — no nodes yet: add one from the window'],
    ['all Ready', [node('a', 'True'), node('b', 'True')], true, 'healthy', 'kubelab — 2/2 nodes Ready'],
    [
      'some Ready',
      [node('a', 'True'), node('b', 'Unknown'), node('c', 'False')],
      true,
      'degraded',
      'kubelab — 1/3 nodes Ready',
    ],
    ['none Ready', [node('a', 'Unknown'), node('b')], true, 'down', 'kubelab — 0/2 nodes Ready'],
  ] as const)('%s', (_, nodes, synced, level, tooltip) => {
    expect(trayHealth(countReady(nodes), synced)).toEqual({ level, tooltip });
  });
});

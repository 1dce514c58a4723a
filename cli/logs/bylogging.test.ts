import { describe, expect, it } from 'vitest';
import type { Pod } from '../../client/api/types.js';
import { byLogging } from './bylogging.js';

interface Shape {
  node?: string;
  phase?: string;
  readySince?: string;
  restarts?: number;
  created?: string;
}

function pod(name: string, s: Shape): Pod {
  return {
    metadata: { name, creationTimestamp: s.created ?? '2026-01-01T00:00:00Z' },
    spec: { nodeName: s.node ?? 'lab-0' },
    status: {
      phase: s.phase ?? 'Running',
      conditions: s.readySince ? [{ type: 'Ready', status: 'True', lastTransitionTime: s.readySince }] : [],
      containerStatuses: [{ name: 'main', restartCount: s.restarts ?? 0 }],
    },
  };
}

const order = (...pods: Pod[]) => [...pods].sort(byLogging).map((p) => p.metadata?.name);

describe('byLogging: the pod kubectl reads logs from first', () => {
  it('prefers a scheduled pod, then Running over Unknown over Pending', () => {
    expect(
      order(pod('unscheduled', { node: '', phase: 'Running' }), pod('scheduled', { phase: 'Pending' })),
    ).toEqual(['scheduled', 'unscheduled']);
    expect(
      order(pod('pending', { phase: 'Pending' }), pod('unknown', { phase: 'Unknown' }), pod('running', {})),
    ).toEqual(['running', 'unknown', 'pending']);
  });

  it('prefers a ready pod, the one ready for longer, then more restarts, then the older', () => {
    expect(order(pod('not-ready', {}), pod('ready', { readySince: '2026-01-01T00:05:00Z' }))).toEqual([
      'ready',
      'not-ready',
    ]);
    expect(
      order(
        pod('recent', { readySince: '2026-01-01T00:09:00Z' }),
        pod('long', { readySince: '2026-01-01T00:01:00Z' }),
      ),
    ).toEqual(['long', 'recent']);
    expect(order(pod('calm', {}), pod('restarted', { restarts: 3 }))).toEqual(['restarted', 'calm']);
    expect(
      order(
        pod('young', { created: '2026-01-02T00:00:00Z' }),
        pod('old', { created: '2026-01-01T00:00:00Z' }),
      ),
    ).toEqual(['old', 'young']);
  });
});

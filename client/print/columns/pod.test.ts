import { describe, expect, it } from 'vitest';
import type { Pod } from '../../api/types.js';
import { podReady, podRestarts, podStatus } from './pod.js';

const base = (status: Pod['status'], extra: Partial<Pod> = {}): Pod => ({
  metadata: { name: 'p' },
  spec: { containers: [{ name: 'a' }, { name: 'b' }] },
  status,
  ...extra,
});

describe("pod columns (kubectl's printPod)", () => {
  it('shows the reason a container waits or ended, over the phase', () => {
    expect(podStatus(base({ phase: 'Pending' }))).toBe('Pending');
    expect(
      podStatus(
        base({
          phase: 'Running',
          containerStatuses: [{ name: 'a', state: { waiting: { reason: 'CrashLoopBackOff' } } }],
        }),
      ),
    ).toBe('CrashLoopBackOff');
    expect(
      podStatus(
        base({ phase: 'Failed', containerStatuses: [{ name: 'a', state: { terminated: { exitCode: 2 } } }] }),
      ),
    ).toBe('ExitCode:2');
    expect(podStatus(base({ phase: 'Failed', reason: 'OutOfcpu' }))).toBe('OutOfcpu');
    expect(
      podStatus(
        base(
          { phase: 'Pending', initContainerStatuses: [{ name: 'i', state: { running: {} } }] },
          { spec: { initContainers: [{ name: 'i' }], containers: [{ name: 'a' }] } },
        ),
      ),
    ).toBe('Init:0/1');
    expect(
      podStatus(
        base({ phase: 'Running' }, { metadata: { name: 'p', deletionTimestamp: '2026-01-01T00:00:00Z' } }),
      ),
    ).toBe('Terminating');
  });

  it('counts ready containers and restarts, with how long ago the last was', () => {
    const now = Date.parse('2026-01-01T00:10:00Z');
    const pod = base({
      containerStatuses: [
        {
          name: 'a',
          ready: true,
          state: { running: {} },
          restartCount: 2,
          lastState: { terminated: { finishedAt: '2026-01-01T00:08:00Z' } },
        },
        { name: 'b', ready: false, state: { waiting: {} }, restartCount: 1 },
      ],
    });
    expect(podReady(pod)).toBe('1/2');
    expect(podRestarts(pod, now)).toBe('3 (2m ago)');
    expect(podRestarts(base({}), now)).toBe('0');
  });
});

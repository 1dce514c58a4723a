/**
 * nodeShouldRunDaemonPod, branch by branch: the template's nodeName, nodeSelector and required
 * node affinity; taints × tolerations × effects, including the tolerations every daemon pod
 * gets; resources, which are the scheduler's business.
 */
import { describe, expect, it } from 'vitest';
import type { Taint, Toleration } from '../../../client/api/types.js';
import { nodeShouldRunDaemonPod } from '../../../main/controllers/daemonset/eligibility.js';
import { ds, node } from './fixtures.js';

const RUN = { shouldRun: true, shouldContinueRunning: true };
const KEEP = { shouldRun: false, shouldContinueRunning: true };
const NONE = { shouldRun: false, shouldContinueRunning: false };

describe('nodeShouldRunDaemonPod: placement', () => {
  it.each([
    ['no constraints', {}, {}, RUN],
    ['template nodeName is this node', { nodeName: 'n1' }, {}, RUN],
    ['template nodeName is another node', { nodeName: 'n2' }, {}, NONE],
    ['nodeSelector matches', { nodeSelector: { disk: 'ssd' } }, { disk: 'ssd' }, RUN],
    ['nodeSelector does not match', { nodeSelector: { disk: 'ssd' } }, { disk: 'hdd' }, NONE],
    [
      'required affinity matches',
      {
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [
                { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a', 'b'] }] },
              ],
            },
          },
        },
      },
      { zone: 'b' },
      RUN,
    ],
    [
      'required affinity does not match',
      {
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] }],
            },
          },
        },
      },
      { zone: 'b' },
      NONE,
    ],
    [
      'preferred affinity only is no constraint',
      {
        affinity: {
          nodeAffinity: {
            preferredDuringSchedulingIgnoredDuringExecution: [
              {
                weight: 1,
                preference: { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] },
              },
            ],
          },
        },
      },
      { zone: 'b' },
      RUN,
    ],
    [
      'insufficient resources: still runs (the scheduler keeps the pod Pending)',
      { containers: [{ name: 'c', image: 'x', resources: { requests: { cpu: '64', memory: '1Ti' } } }] },
      {},
      RUN,
    ],
  ])('%s', (_what, spec, labels, expected) => {
    expect(nodeShouldRunDaemonPod(node('n1', { labels }), ds(spec))).toEqual(expected);
  });
});

describe('nodeShouldRunDaemonPod: taints × tolerations × effects', () => {
  const t = (key: string, effect: string, value = ''): Taint => ({ key, value, effect });
  const tol = (key: string, effect?: string, operator = 'Exists', value?: string): Toleration => ({
    key,
    operator,
    effect,
    value,
  });
  it.each<[string, Taint[], Toleration[], typeof RUN]>([
    [
      'untolerated NoSchedule: keep a running pod, place no new one',
      [t('dedicated', 'NoSchedule', 'gpu')],
      [],
      KEEP,
    ],
    ['untolerated PreferNoSchedule: runs', [t('dedicated', 'PreferNoSchedule')], [], RUN],
    ['untolerated NoExecute: must not run', [t('dedicated', 'NoExecute', 'gpu')], [], NONE],
    ['tolerated NoSchedule', [t('dedicated', 'NoSchedule', 'gpu')], [tol('dedicated', 'NoSchedule')], RUN],
    ['tolerated NoExecute', [t('dedicated', 'NoExecute', 'gpu')], [tol('dedicated', 'NoExecute')], RUN],
    [
      'toleration for another effect does not count',
      [t('dedicated', 'NoExecute', 'gpu')],
      [tol('dedicated', 'NoSchedule')],
      NONE,
    ],
    [
      'Equal toleration with a different value does not count',
      [t('dedicated', 'NoSchedule', 'gpu')],
      [tol('dedicated', 'NoSchedule', 'Equal', 'cpu')],
      KEEP,
    ],
    [
      'empty-key Exists tolerates everything',
      [t('a', 'NoExecute'), t('b', 'NoSchedule')],
      [{ operator: 'Exists' }],
      RUN,
    ],
    [
      'NoExecute wins over a tolerated NoSchedule',
      [t('a', 'NoSchedule'), t('b', 'NoExecute')],
      [tol('a')],
      NONE,
    ],
    [
      'not-ready NoExecute: daemon pods tolerate it',
      [t('node.kubernetes.io/not-ready', 'NoExecute')],
      [],
      RUN,
    ],
    [
      'unreachable NoExecute: daemon pods tolerate it',
      [t('node.kubernetes.io/unreachable', 'NoExecute')],
      [],
      RUN,
    ],
    [
      'memory-pressure NoSchedule: tolerated',
      [t('node.kubernetes.io/memory-pressure', 'NoSchedule')],
      [],
      RUN,
    ],
    ['disk-pressure NoSchedule: tolerated', [t('node.kubernetes.io/disk-pressure', 'NoSchedule')], [], RUN],
    ['pid-pressure NoSchedule: tolerated', [t('node.kubernetes.io/pid-pressure', 'NoSchedule')], [], RUN],
    ['unschedulable NoSchedule: tolerated', [t('node.kubernetes.io/unschedulable', 'NoSchedule')], [], RUN],
    [
      'network-unavailable NoSchedule: not tolerated without hostNetwork',
      [t('node.kubernetes.io/network-unavailable', 'NoSchedule')],
      [],
      KEEP,
    ],
  ])('%s', (_what, taints, tolerations, expected) => {
    expect(nodeShouldRunDaemonPod(node('n1', { taints }), ds({ tolerations }))).toEqual(expected);
  });

  it('network-unavailable is tolerated for hostNetwork pods', () => {
    const taints = [{ key: 'node.kubernetes.io/network-unavailable', effect: 'NoSchedule' }];
    expect(nodeShouldRunDaemonPod(node('n1', { taints }), ds({ hostNetwork: true }))).toEqual(RUN);
  });
});

describe('nodeShouldRunDaemonPod: cached objects', () => {
  const frozen = <T>(o: T): T => {
    if (o && typeof o === 'object') {
      for (const v of Object.values(o)) frozen(v);
      Object.freeze(o);
    }
    return o;
  };

  it('answers for frozen (cached) objects as for fresh ones, and anew for each new version of a node', () => {
    const daemon = frozen(ds({ nodeSelector: { disk: 'ssd' } }));
    const v1 = frozen(node('n1', { labels: { disk: 'ssd' } }));
    expect(nodeShouldRunDaemonPod(v1, daemon)).toEqual(RUN);
    expect(nodeShouldRunDaemonPod(v1, daemon)).toEqual(RUN);
    const v2 = frozen(node('n1', { labels: { disk: 'ssd' }, taints: [{ key: 'k', effect: 'NoSchedule' }] }));
    expect(nodeShouldRunDaemonPod(v2, daemon)).toEqual(KEEP);
    const v3 = frozen(node('n1', { labels: { disk: 'hdd' } }));
    expect(nodeShouldRunDaemonPod(v3, daemon)).toEqual(NONE);
    expect(nodeShouldRunDaemonPod(v1, frozen(ds({ nodeSelector: { disk: 'hdd' } })))).toEqual(NONE);
  });
});

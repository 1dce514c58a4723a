/**
 * The template generation in the controller's decisions (IsPodUpdated, CreatePodTemplate): a
 * pod is current when its controller-revision-hash is the current revision's OR its
 * pod-template-generation is the DaemonSet's template generation (the
 * deprecated.daemonset.template.generation annotation). Pods the controller creates carry
 * both. A pod adopted from another controller — same template, a hash in another format, the
 * right generation — is therefore not replaced by a rolling update, nor counted as out of date.
 */
import { describe, expect, it } from 'vitest';
import type { DaemonSet, Pod } from '../../../client/api/types.js';
import { PerKeyBackoff } from '../../../main/controllers/daemonset/backoff.js';
import { podsShouldBeOnNode } from '../../../main/controllers/daemonset/podsonnode.js';
import { daemonPodFor } from '../../../main/controllers/daemonset/podtemplate.js';
import { rollingUpdatePlan } from '../../../main/controllers/daemonset/rollingupdate.js';
import { daemonSetCounts } from '../../../main/controllers/daemonset/status.js';
import {
  isPodUpdated,
  templateGeneration,
  type NodeToDaemonPods,
} from '../../../main/controllers/daemonset/util.js';
import { ds, node, pod } from './fixtures.js';

const NOW = Date.parse('2026-01-01T02:00:00Z');
const GEN = 'deprecated.daemonset.template.generation';

function atGeneration(set: DaemonSet, generation: string | undefined): DaemonSet {
  const annotations = { ...set.metadata?.annotations };
  if (generation === undefined) delete annotations[GEN];
  else annotations[GEN] = generation;
  return { ...set, metadata: { ...set.metadata, annotations } };
}

/** A pod labelled with a hash and, optionally, a template generation. */
function labelled(nodeName: string, hash: string, generation?: string, name?: string): Pod {
  const p = pod(nodeName, { hash, name });
  if (generation !== undefined) p.metadata!.labels!['pod-template-generation'] = generation;
  return p;
}

const byNode = (pods: Pod[]): NodeToDaemonPods => new Map(pods.map((p) => [p.spec!.nodeName!, [p]]));

describe('templateGeneration', () => {
  it('reads the annotation as Kubernetes parses it, and ignores what is not a 64-bit integer', () => {
    expect(templateGeneration(atGeneration(ds(), '3'))).toBe('3');
    expect(templateGeneration(atGeneration(ds(), '+03'))).toBe('3');
    expect(templateGeneration(atGeneration(ds(), '9223372036854775807'))).toBe('9223372036854775807');
    expect(templateGeneration(atGeneration(ds(), undefined))).toBeUndefined();
    for (const bad of ['', 'two', '1.5', ' 1', '9223372036854775808']) {
      expect(templateGeneration(atGeneration(ds(), bad)), bad).toBeUndefined();
    }
  });
});

describe('isPodUpdated', () => {
  it('is current by hash or by generation, old only when neither matches', () => {
    expect(isPodUpdated(labelled('n', 'new'), 'new', '2')).toBe(true);
    expect(isPodUpdated(labelled('n', 'k8s-5d8f7b', '2'), 'new', '2')).toBe(true);
    expect(isPodUpdated(labelled('n', 'old', '1'), 'new', '2')).toBe(false);
    expect(isPodUpdated(labelled('n', 'old'), 'new', '2')).toBe(false);
  });

  it('without a generation goes by hash alone, and an empty hash matches nothing', () => {
    expect(isPodUpdated(labelled('n', 'k8s-5d8f7b', '2'), 'new', undefined)).toBe(false);
    const unlabelled = labelled('n', 'x');
    delete unlabelled.metadata!.labels!['controller-revision-hash'];
    expect(isPodUpdated(unlabelled, '', '2')).toBe(false);
  });
});

describe('daemonPodFor', () => {
  it('labels the pod with the template generation and the revision hash', () => {
    const p = daemonPodFor(atGeneration(ds(), '4'), 'n1', 'abc');
    expect(p.metadata?.labels).toEqual({
      app: 'agent',
      'pod-template-generation': '4',
      'controller-revision-hash': 'abc',
    });
  });

  it('overrides a template that sets the labels itself, and leaves the generation out when there is none', () => {
    const set = atGeneration(ds(), undefined);
    set.spec!.template!.metadata!.labels = {
      app: 'agent',
      'pod-template-generation': '99',
      'controller-revision-hash': 'mine',
    };
    expect(daemonPodFor(set, 'n1', 'abc').metadata?.labels).toEqual({
      app: 'agent',
      'pod-template-generation': '99',
      'controller-revision-hash': 'abc',
    });
    expect(daemonPodFor(atGeneration(set, '5'), 'n1', 'abc').metadata?.labels).toMatchObject({
      'pod-template-generation': '5',
    });
  });
});

describe('rolling update', () => {
  const set = atGeneration(
    ds({}, { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 2, maxSurge: 0 } } }),
    '2',
  );
  const nodes = [node('n1'), node('n2'), node('n3')];
  const adopted = labelled('n1', 'k8s-5d8f7b', '2', 'adopted');
  const stale = labelled('n2', 'old', '1', 'stale');
  const current = labelled('n3', 'new', '2', 'current');

  it('replaces the pod of an old generation and hash, not the adopted one of the current generation', () => {
    const plan = rollingUpdatePlan(set, nodes, byNode([adopted, stale, current]), 'new', NOW);
    expect(plan.deletePods.map((p) => p.metadata?.name)).toEqual(['stale']);
    expect(plan.createOnNodes).toEqual([]);
  });

  it('with surge: surges beside the old pod only', () => {
    const surge = atGeneration(
      ds(
        {},
        { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 2 } } },
      ),
      '2',
    );
    const plan = rollingUpdatePlan(surge, nodes, byNode([adopted, stale, current]), 'new', NOW);
    expect(plan).toEqual({ deletePods: [], createOnNodes: ['n2'] });
  });

  it('counts the adopted pod as up to date in status', () => {
    const counts = daemonSetCounts(set, nodes, byNode([adopted, stale, current]), 'new', NOW);
    expect(counts.updatedNumberScheduled).toBe(2);
  });

  it('without the annotation the adopted pod is old (hash alone), as before', () => {
    const plain = atGeneration(set, undefined);
    const plan = rollingUpdatePlan(plain, nodes, byNode([adopted, stale, current]), 'new', NOW);
    expect(plan.deletePods.map((p) => p.metadata?.name).sort()).toEqual(['adopted', 'stale']);
  });

  it('with surge on one node: the adopted pod of the current generation is the new one that stays', () => {
    const surge = atGeneration(
      ds(
        {},
        { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } } },
      ),
      '2',
    );
    const older = labelled('n1', 'old', '1', 'older');
    older.metadata!.creationTimestamp = '2026-01-01T00:00:01Z';
    const adoptedLater = labelled('n1', 'k8s-5d8f7b', '2', 'adopted');
    adoptedLater.metadata!.creationTimestamp = '2026-01-01T00:00:02Z';
    const plan = podsShouldBeOnNode(
      node('n1'),
      [older, adoptedLater],
      surge,
      'new',
      new PerKeyBackoff(),
      NOW,
    );
    // Both ready: the new one (by generation) is available, so the old one goes.
    expect(plan.delete.map((p) => p.metadata?.name)).toEqual(['older']);
  });
});

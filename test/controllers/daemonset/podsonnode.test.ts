/**
 * podsShouldBeOnNode, branch by branch: create where missing; delete where the pod must not
 * run; failed pods deleted under a per-(DaemonSet, node) backoff; duplicates pruned to the
 * oldest; with surge, an old and a new pod side by side until the new one is available.
 */
import { describe, expect, it } from 'vitest';
import { PerKeyBackoff } from '../../../main/controllers/daemonset/backoff.js';
import {
  podsShouldBeOnNode,
  unscheduledPodsWithoutNode,
} from '../../../main/controllers/daemonset/podsonnode.js';
import { ds, node, pod } from './fixtures.js';

const NOW = Date.parse('2026-01-01T02:00:00Z');
const names = (pods: { metadata?: { name?: string } }[]) => pods.map((p) => p.metadata?.name);
const surge = ds(
  {},
  { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } } },
);

describe('podsShouldBeOnNode', () => {
  it('creates a pod where one should run and none does', () => {
    const plan = podsShouldBeOnNode(node('n1'), [], ds(), 'new', new PerKeyBackoff(), NOW);
    expect(plan).toMatchObject({ create: true, delete: [], failed: [] });
  });

  it('does nothing where one runs', () => {
    const plan = podsShouldBeOnNode(node('n1'), [pod('n1')], ds(), 'new', new PerKeyBackoff(), NOW);
    expect(plan).toMatchObject({ create: false, delete: [] });
  });

  it('creates nothing on a NoSchedule-tainted node, and keeps what runs there', () => {
    const tainted = node('n1', { taints: [{ key: 'k', effect: 'NoSchedule' }] });
    expect(podsShouldBeOnNode(tainted, [], ds(), 'new', new PerKeyBackoff(), NOW).create).toBe(false);
    const p = pod('n1');
    expect(podsShouldBeOnNode(tainted, [p], ds(), 'new', new PerKeyBackoff(), NOW).delete).toEqual([]);
  });

  it('deletes every live pod where none may run (NoExecute, selector), skipping ones being deleted', () => {
    const tainted = node('n1', { taints: [{ key: 'k', effect: 'NoExecute' }] });
    const a = pod('n1', { name: 'a' });
    const b = pod('n1', { name: 'b', deleting: true });
    expect(names(podsShouldBeOnNode(tainted, [a, b], ds(), 'new', new PerKeyBackoff(), NOW).delete)).toEqual([
      'a',
    ]);
    const selective = ds({ nodeSelector: { disk: 'ssd' } });
    expect(
      names(podsShouldBeOnNode(node('n1'), [a], selective, 'new', new PerKeyBackoff(), NOW).delete),
    ).toEqual(['a']);
  });

  it('deletes a failed pod with an event, then backs off: 1 s, 2 s, 4 s … between deletions', () => {
    const backoff = new PerKeyBackoff();
    const failed = pod('n1', { name: 'f', phase: 'Failed' });
    const first = podsShouldBeOnNode(node('n1'), [failed], ds(), 'new', backoff, NOW);
    expect(names(first.delete)).toEqual(['f']);
    expect(names(first.failed)).toEqual(['f']);

    // The replacement failed too, within the backoff: not deleted, retried after the wait.
    const again = pod('n1', { name: 'g', phase: 'Failed' });
    const held = podsShouldBeOnNode(node('n1'), [again], ds(), 'new', backoff, NOW + 500);
    expect(held.delete).toEqual([]);
    expect(held.retryAfterMs).toBe(1_000);

    const later = podsShouldBeOnNode(node('n1'), [again], ds(), 'new', backoff, NOW + 1_000);
    expect(names(later.delete)).toEqual(['g']);
    const third = podsShouldBeOnNode(
      node('n1'),
      [pod('n1', { phase: 'Failed' })],
      ds(),
      'new',
      backoff,
      NOW + 2_000,
    );
    expect(third.delete).toEqual([]);
    expect(third.retryAfterMs).toBe(2_000);
  });

  it('keeps the backoff per node: a failure on one node does not slow another', () => {
    const backoff = new PerKeyBackoff();
    podsShouldBeOnNode(node('n1'), [pod('n1', { phase: 'Failed' })], ds(), 'new', backoff, NOW);
    const other = podsShouldBeOnNode(node('n2'), [pod('n2', { phase: 'Failed' })], ds(), 'new', backoff, NOW);
    expect(other.delete).toHaveLength(1);
  });

  it('deletes a succeeded pod without backoff', () => {
    const done = pod('n1', { name: 's', phase: 'Succeeded' });
    expect(
      names(podsShouldBeOnNode(node('n1'), [done], ds(), 'new', new PerKeyBackoff(), NOW).delete),
    ).toEqual(['s']);
  });

  it('deletes duplicates, keeping the oldest', () => {
    const old = pod('n1', { name: 'old', created: '2026-01-01T00:00:01Z' });
    const young = pod('n1', { name: 'young', created: '2026-01-01T00:00:09Z' });
    const mid = pod('n1', { name: 'mid', created: '2026-01-01T00:00:05Z' });
    const plan = podsShouldBeOnNode(node('n1'), [young, old, mid], ds(), 'new', new PerKeyBackoff(), NOW);
    expect(names(plan.delete)).toEqual(['mid', 'young']);
    expect(plan.create).toBe(false);
  });

  it('with surge: keeps an old and a new pod until the new one is available', () => {
    const oldPod = pod('n1', { name: 'old', hash: 'old', created: '2026-01-01T00:00:01Z' });
    const waiting = pod('n1', { name: 'new', hash: 'new', ready: false, created: '2026-01-01T00:00:05Z' });
    expect(
      podsShouldBeOnNode(node('n1'), [oldPod, waiting], surge, 'new', new PerKeyBackoff(), NOW).delete,
    ).toEqual([]);
    const ready = pod('n1', { name: 'new', hash: 'new', created: '2026-01-01T00:00:05Z' });
    expect(
      names(podsShouldBeOnNode(node('n1'), [oldPod, ready], surge, 'new', new PerKeyBackoff(), NOW).delete),
    ).toEqual(['old']);
  });

  it('with surge: an old pod that is not ready is replaced at once; extra pods of one revision go', () => {
    const sick = pod('n1', { name: 'old', hash: 'old', ready: false, created: '2026-01-01T00:00:01Z' });
    const waiting = pod('n1', { name: 'new', hash: 'new', ready: false, created: '2026-01-01T00:00:05Z' });
    const extra = pod('n1', { name: 'new2', hash: 'new', created: '2026-01-01T00:00:07Z' });
    const plan = podsShouldBeOnNode(
      node('n1'),
      [sick, waiting, extra],
      surge,
      'new',
      new PerKeyBackoff(),
      NOW,
    );
    expect(names(plan.delete).sort()).toEqual(['new2', 'old']);
  });

  it('with surge and no pod at all: creates one', () => {
    expect(podsShouldBeOnNode(node('n1'), [], surge, 'new', new PerKeyBackoff(), NOW).create).toBe(true);
  });
});

describe('unscheduledPodsWithoutNode', () => {
  it('deletes the unbound pods meant for a node that is gone, and leaves the bound ones to pod GC', () => {
    const bound = pod('gone', { name: 'bound' });
    const unbound = { ...pod('gone', { name: 'unbound' }), spec: { containers: [] } };
    const unboundGoing = { ...pod('gone', { name: 'going', deleting: true }), spec: { containers: [] } };
    const elsewhere = { ...pod('n1', { name: 'elsewhere' }), spec: { containers: [] } };
    const byNode = new Map([
      ['gone', [bound, unbound, unboundGoing]],
      ['n1', [elsewhere]],
    ]);
    expect(names(unscheduledPodsWithoutNode([node('n1')], byNode))).toEqual(['unbound']);
  });
});

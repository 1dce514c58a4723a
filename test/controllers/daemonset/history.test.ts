/**
 * DaemonSet history: revision names from a hash of the template (and the collision count),
 * matching a revision to the current template, and cleanup beyond revisionHistoryLimit that
 * spares revisions live pods still use.
 */
import { describe, expect, it } from 'vitest';
import type { ControllerRevision } from '../../../client/api/types.js';
import { computeHash } from '../../../main/controllers/common/hash.js';
import {
  newRevision,
  revisionMatches,
  revisionsToDelete,
  templateOf,
} from '../../../main/controllers/daemonset/history.js';
import { ds } from './fixtures.js';

describe('history', () => {
  it('hashes equal templates equally, whatever their key order, and differently with a collision count', () => {
    const a = {
      metadata: { labels: { app: 'x', tier: 'y' } },
      spec: { containers: [{ name: 'c', image: 'i' }] },
    };
    const b = {
      spec: { containers: [{ image: 'i', name: 'c' }] },
      metadata: { labels: { tier: 'y', app: 'x' } },
    };
    expect(computeHash(a, 0)).toBe(computeHash(b, 0));
    expect(computeHash(a, 0)).toMatch(/^[bcdfghjklmnpqrstvwxz2456789]+$/);
    expect(computeHash(a, 1)).not.toBe(computeHash(a, 0));
    expect(computeHash({ ...a, spec: { containers: [{ name: 'c', image: 'j' }] } }, 0)).not.toBe(
      computeHash(a, 0),
    );
  });

  it('a revision holds the template it was made from, and gives it back', () => {
    const set = ds();
    const rev = newRevision(set, computeHash(set.spec?.template, 0), 1);
    expect(rev.metadata?.name).toBe(`agent-${computeHash(set.spec?.template, 0)}`);
    expect(rev.metadata?.ownerReferences?.[0]).toMatchObject({
      kind: 'DaemonSet',
      uid: 'ds-uid',
      controller: true,
    });
    expect(revisionMatches(set, rev)).toBe(true);
    expect(templateOf(rev)).toEqual(set.spec?.template);
    const changed = ds({ containers: [{ name: 'c', image: 'y' }] });
    expect(revisionMatches(changed, rev)).toBe(false);
  });

  it('cleans up the oldest revisions beyond the limit, never one a live pod uses', () => {
    const revs: ControllerRevision[] = [1, 2, 3, 4, 5].map((n) => ({
      metadata: { name: `agent-h${n}`, labels: { 'controller-revision-hash': `h${n}` } },
      revision: n,
    }));
    const limited = ds({}, { revisionHistoryLimit: 2 });
    const names = (rs: ControllerRevision[]) => rs.map((r) => r.metadata?.name);
    expect(names(revisionsToDelete(limited, revs, new Set()))).toEqual(['agent-h1', 'agent-h2', 'agent-h3']);
    expect(names(revisionsToDelete(limited, revs, new Set(['h1'])))).toEqual([
      'agent-h2',
      'agent-h3',
      'agent-h4',
    ]);
    expect(revisionsToDelete(ds({}, { revisionHistoryLimit: 10 }), revs, new Set())).toEqual([]);
  });
});

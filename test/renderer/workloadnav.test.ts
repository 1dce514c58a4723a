/**
 * The workload pages in the GUI's address: Deployments, Jobs and CronJobs as lists and as
 * object pages, highlighted under their list, and the Alt+digit shortcuts now that there are
 * more views than digits 1…9.
 */
import { describe, expect, it } from 'vitest';
import {
  parseRoute,
  routeHash,
  sectionOf,
  shortcutKey,
  viewForShortcut,
  VIEWS,
  type Route,
} from '../../renderer/src/router.js';

describe('workload routes', () => {
  it('reads the lists and object pages from the hash, and writes them back the same', () => {
    const routes: Array<[string, Route]> = [
      ['#deployments', { view: 'deployments' }],
      ['#jobs', { view: 'jobs' }],
      ['#cronjobs', { view: 'cronjobs' }],
      ['#deployment/default/web', { view: 'deployment', namespace: 'default', name: 'web' }],
      [
        '#job/lab/backup-manual-1777629600',
        { view: 'job', namespace: 'lab', name: 'backup-manual-1777629600' },
      ],
      ['#cronjob/lab/night%20ly', { view: 'cronjob', namespace: 'lab', name: 'night ly' }],
    ];
    for (const [hash, route] of routes) {
      expect(parseRoute(hash)).toEqual(route);
      expect(routeHash(route)).toBe(hash);
    }
  });

  it('falls back to the overview for a page without its namespace and name', () => {
    for (const hash of ['#deployment', '#job/lab', '#cronjob//x', '#constructor/a/b', '#toString']) {
      expect(parseRoute(hash)).toEqual({ view: 'overview' });
    }
  });

  it('highlights the list an object page belongs to', () => {
    expect(sectionOf({ view: 'deployment', namespace: 'a', name: 'b' })).toBe('deployments');
    expect(sectionOf({ view: 'job', namespace: 'a', name: 'b' })).toBe('jobs');
    expect(sectionOf({ view: 'cronjob', namespace: 'a', name: 'b' })).toBe('cronjobs');
    expect(sectionOf({ view: 'daemonset', namespace: 'a', name: 'b' })).toBe('daemonsets');
  });
});

describe('Alt+digit shortcuts', () => {
  it('give the first nine views 1…9 and the tenth 0, and read back to the same view', () => {
    const keys = VIEWS.map((_, i) => shortcutKey(i));
    expect(keys.slice(0, 10)).toEqual(['1', '2', '3', '4', '5', '6', '7', '8', '9', '0']);
    expect(keys.slice(10).every((k) => k === undefined)).toBe(true);
    VIEWS.forEach((view, i) => {
      const key = shortcutKey(i);
      if (key) expect(viewForShortcut(key)).toBe(view);
    });
    expect(viewForShortcut('a')).toBeUndefined();
    expect(viewForShortcut('10')).toBeUndefined();
  });
});

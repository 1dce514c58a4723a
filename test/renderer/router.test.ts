/** Where the GUI is, in the address's hash: parsed, written back, and highlighted in the navigation. */
import { describe, expect, it } from 'vitest';
import { parseRoute, routeHash, sectionOf, type Route } from '../../renderer/src/router.js';

describe('routes', () => {
  it('reads views and object pages from the hash, and writes them back the same', () => {
    const routes: Array<[string, Route]> = [
      ['#pods', { view: 'pods' }],
      ['#settings', { view: 'settings' }],
      ['#node/pi-1', { view: 'node', name: 'pi-1' }],
      [
        '#daemonset/kube-system/node%20exporter',
        { view: 'daemonset', namespace: 'kube-system', name: 'node exporter' },
      ],
    ];
    for (const [hash, route] of routes) {
      expect(parseRoute(hash)).toEqual(route);
      expect(routeHash(route)).toBe(hash);
    }
  });

  it('falls back to the overview for anything else', () => {
    for (const hash of ['', '#', '#nowhere', '#node', '#daemonset/only-namespace']) {
      expect(parseRoute(hash)).toEqual({ view: 'overview' });
    }
  });

  it('highlights the list an object page belongs to', () => {
    expect(sectionOf({ view: 'node', name: 'x' })).toBe('nodes');
    expect(sectionOf({ view: 'daemonset', namespace: 'a', name: 'b' })).toBe('daemonsets');
    expect(sectionOf({ view: 'events' })).toBe('events');
  });
});

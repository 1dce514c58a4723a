/**
 * Where the GUI is, as the address's hash: #nodes, #node/pi-1, #daemonset/default/exporter.
 * A hash survives a reload and works the same from file:// (desktop) and http:// (browser).
 */
export const VIEWS = [
  'overview',
  'nodes',
  'pods',
  'daemonsets',
  'events',
  'apply',
  'addnode',
  'settings',
] as const;
export type ViewName = (typeof VIEWS)[number];

export type Route =
  | { view: ViewName }
  | { view: 'node'; name: string }
  | { view: 'daemonset'; namespace: string; name: string };

export function parseRoute(hash: string): Route {
  const parts = hash
    .replace(/^#\/?/, '')
    .split('/')
    .map((p) => decodeURIComponent(p));
  const [view, a, b] = parts;
  if (view === 'node' && a) return { view: 'node', name: a };
  if (view === 'daemonset' && a && b) return { view: 'daemonset', namespace: a, name: b };
  return (VIEWS as readonly string[]).includes(view) ? { view: view as ViewName } : { view: 'overview' };
}

export function routeHash(route: Route): string {
  switch (route.view) {
    case 'node':
      return `#node/${encodeURIComponent(route.name)}`;
    case 'daemonset':
      return `#daemonset/${encodeURIComponent(route.namespace)}/${encodeURIComponent(route.name)}`;
    default:
      return `#${route.view}`;
  }
}

/** The list a page belongs to, for the navigation's highlight. */
export function sectionOf(route: Route): ViewName {
  if (route.view === 'node') return 'nodes';
  if (route.view === 'daemonset') return 'daemonsets';
  return route.view;
}

export type Navigate = (route: Route) => void;

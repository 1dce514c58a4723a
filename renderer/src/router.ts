/**
 * Where the GUI is, as the address's hash: #nodes, #node/pi-1, #daemonset/default/exporter.
 * A hash survives a reload and works the same from file:// (desktop) and http:// (browser).
 */
export const VIEWS = [
  'overview',
  'nodes',
  'pods',
  'deployments',
  'daemonsets',
  'jobs',
  'cronjobs',
  'configmaps',
  'secrets',
  'events',
  'apply',
  'addnode',
  'settings',
] as const;
export type ViewName = (typeof VIEWS)[number];

/** The pages of one namespaced object, each with the list it belongs to. */
const OBJECT_PAGES = {
  deployment: 'deployments',
  daemonset: 'daemonsets',
  job: 'jobs',
  cronjob: 'cronjobs',
  configmap: 'configmaps',
  secret: 'secrets',
} as const satisfies Record<string, ViewName>;
export type ObjectPage = keyof typeof OBJECT_PAGES;

export type Route =
  { view: ViewName } | { view: 'node'; name: string } | { view: ObjectPage; namespace: string; name: string };

const isObjectPage = (view: string): view is ObjectPage => Object.hasOwn(OBJECT_PAGES, view);

export function parseRoute(hash: string): Route {
  const parts = hash
    .replace(/^#\/?/, '')
    .split('/')
    .map((p) => decodeURIComponent(p));
  const [view, a, b] = parts;
  if (view === 'node' && a) return { view: 'node', name: a };
  if (isObjectPage(view) && a && b) return { view, namespace: a, name: b };
  return (VIEWS as readonly string[]).includes(view) ? { view: view as ViewName } : { view: 'overview' };
}

export function routeHash(route: Route): string {
  if (route.view === 'node') return `#node/${encodeURIComponent(route.name)}`;
  if ('namespace' in route)
    return `#${route.view}/${encodeURIComponent(route.namespace)}/${encodeURIComponent(route.name)}`;
  return `#${route.view}`;
}

/** The list a page belongs to, for the navigation's highlight. */
export function sectionOf(route: Route): ViewName {
  if (route.view === 'node') return 'nodes';
  if (isObjectPage(route.view)) return OBJECT_PAGES[route.view];
  return route.view;
}

/** The digit that, with Alt, opens the view at `index`: 1…9, then 0; the rest have none. */
export function shortcutKey(index: number): string | undefined {
  if (index < 9) return String(index + 1);
  return index === 9 ? '0' : undefined;
}

/** The view Alt+`key` opens, if any. */
export function viewForShortcut(key: string): ViewName | undefined {
  if (!/^\d$/.test(key)) return undefined;
  return VIEWS[key === '0' ? 9 : Number(key) - 1];
}

export type Navigate = (route: Route) => void;

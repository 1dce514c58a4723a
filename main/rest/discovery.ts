/**
 * The discovery documents kubectl and client libraries read before anything else: /version,
 * /api, /api/v1, /apis, /apis/<group> and /apis/<group>/<version>, all made from the table of
 * kinds (client/api/kinds.ts), so a kind added there is served here without a line changed.
 */
import { arch, platform } from 'node:process';
import type { KindInfo } from '../../client/api/kinds.js';
import { VERSION } from '../version.js';
import { kindsOf, servedGroups } from './paths.js';
import { REVIEW_GROUP, REVIEW_RESOURCES } from './reviews.js';

/** The Kubernetes release whose API and semantics kubelab follows. */
export const KUBERNETES_MINOR = 33;

/** What /version answers (version.Info). */
export function versionInfo(): Record<string, string> {
  return {
    major: '1',
    minor: String(KUBERNETES_MINOR),
    gitVersion: `v1.${KUBERNETES_MINOR}.0+kubelab-${VERSION}`,
    gitCommit: '',
    gitTreeState: 'clean',
    buildDate: '',
    goVersion: `node${process.versions.node}`,
    compiler: 'tsc',
    platform: `${platform === 'win32' ? 'windows' : platform}/${arch === 'x64' ? 'amd64' : arch}`,
  };
}

const READ = ['get', 'list', 'watch'];
const WRITE = ['create', 'delete', 'deletecollection', 'patch', 'update'];

/** Kinds `kubectl get all` shows (Kubernetes puts its workloads in the category "all"). */
const CATEGORY_ALL = new Set(['Pod', 'DaemonSet']);

interface Subresource {
  name: string;
  verbs: string[];
  /** What the subresource takes when it is not the kind itself (pods/eviction: a policy/v1 Eviction). */
  kind?: string;
  group?: string;
  version?: string;
}

/** The subresources each kind serves, with their verbs. */
export function subresourcesOf(info: KindInfo): Subresource[] {
  const out: Subresource[] = [];
  if (info.hasStatus) out.push({ name: 'status', verbs: ['get', 'patch', 'update'] });
  if (info.kind === 'Pod')
    out.push(
      { name: 'binding', verbs: ['create'], kind: 'Binding' },
      { name: 'eviction', verbs: ['create'], kind: 'Eviction', group: 'policy', version: 'v1' },
      { name: 'log', verbs: ['get'] },
    );
  return out;
}

/** NodeMetrics is read-only, as metrics.k8s.io is on any cluster. */
export function verbsOf(info: KindInfo): string[] {
  return info.kind === 'NodeMetrics' ? ['get', 'list'] : [...WRITE, ...READ].sort();
}

function resourceList(group: string, version: string): Record<string, unknown> {
  const resources: Array<Record<string, unknown>> = [];
  for (const info of kindsOf(group, version)) {
    resources.push({
      name: info.resource,
      singularName: info.singular,
      namespaced: info.namespaced,
      kind: info.kind,
      verbs: verbsOf(info),
      ...(info.shortNames.length ? { shortNames: info.shortNames } : {}),
      ...(CATEGORY_ALL.has(info.kind) ? { categories: ['all'] } : {}),
    });
    for (const sub of subresourcesOf(info))
      resources.push({
        name: `${info.resource}/${sub.name}`,
        singularName: '',
        namespaced: info.namespaced,
        ...(sub.group !== undefined ? { group: sub.group, version: sub.version } : {}),
        kind: sub.kind ?? info.kind,
        verbs: sub.verbs,
      });
  }
  if (group === REVIEW_GROUP)
    for (const r of REVIEW_RESOURCES)
      resources.push({
        name: r.resource,
        singularName: '',
        namespaced: false,
        kind: r.kind,
        verbs: ['create'],
      });
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: group ? `${group}/${version}` : version,
    resources,
  };
}

function apiGroup(group: string, versions: string[]): Record<string, unknown> {
  const list = versions.map((v) => ({ groupVersion: `${group}/${v}`, version: v }));
  return { name: group, versions: list, preferredVersion: list[0] };
}

export function discoveryDocument(
  req:
    | { type: 'legacyVersions' }
    | { type: 'groups' }
    | { type: 'group'; group: string }
    | { type: 'resources'; group: string; version: string },
  serverAddress: string,
): Record<string, unknown> {
  switch (req.type) {
    case 'legacyVersions':
      return {
        kind: 'APIVersions',
        versions: ['v1'],
        serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
      };
    case 'groups':
      return {
        kind: 'APIGroupList',
        apiVersion: 'v1',
        groups: servedGroups()
          .filter((g) => g.group !== '')
          .map((g) => apiGroup(g.group, g.versions)),
      };
    case 'group': {
      const g = servedGroups().find((x) => x.group === req.group)!;
      return { kind: 'APIGroup', apiVersion: 'v1', ...apiGroup(g.group, g.versions) };
    }
    case 'resources':
      return resourceList(req.group, req.version);
  }
}

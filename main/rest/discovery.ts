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
const CATEGORY_ALL = new Set(['Pod', 'Service', 'DaemonSet', 'ReplicaSet', 'Deployment', 'Job', 'CronJob']);

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
  if (info.kind === 'Deployment' || info.kind === 'ReplicaSet')
    out.push({
      name: 'scale',
      verbs: ['get', 'patch', 'update'],
      kind: 'Scale',
      group: 'autoscaling',
      version: 'v1',
    });
  if (info.kind === 'Pod')
    out.push(
      { name: 'binding', verbs: ['create'], kind: 'Binding' },
      { name: 'eviction', verbs: ['create'], kind: 'Eviction', group: 'policy', version: 'v1' },
      { name: 'log', verbs: ['get'] },
    );
  return out;
}

/** NodeMetrics is read-only, as metrics.k8s.io is on any cluster; so are kinds the apiserver alone writes. */
export function verbsOf(info: KindInfo): string[] {
  if (info.kind === 'NodeMetrics') return ['get', 'list'];
  return info.readOnly ? READ : [...WRITE, ...READ].sort();
}

/** A resource of a group version as discovery describes it: a served kind, or an access review. */
interface ServedResource {
  resource: string;
  kind: string;
  singular: string;
  namespaced: boolean;
  verbs: string[];
  shortNames: string[];
  categories: string[];
  subresources: Subresource[];
}

function servedResources(group: string, version: string): ServedResource[] {
  if (group === REVIEW_GROUP)
    return REVIEW_RESOURCES.map((r) => ({
      resource: r.resource,
      kind: r.kind,
      singular: r.kind.toLowerCase(),
      namespaced: false,
      verbs: ['create'],
      shortNames: [],
      categories: [],
      subresources: [],
    }));
  return kindsOf(group, version).map((info) => ({
    resource: info.resource,
    kind: info.kind,
    singular: info.singular,
    namespaced: info.namespaced,
    verbs: verbsOf(info),
    shortNames: info.shortNames,
    categories: CATEGORY_ALL.has(info.kind) ? ['all'] : [],
    subresources: subresourcesOf(info),
  }));
}

/** The list fields discovery leaves out when empty. */
function optionalLists(r: ServedResource): Record<string, string[]> {
  return {
    ...(r.shortNames.length ? { shortNames: r.shortNames } : {}),
    ...(r.categories.length ? { categories: r.categories } : {}),
  };
}

/**
 * The aggregated discovery document (apidiscovery.k8s.io/v2, APIGroupDiscoveryList) that
 * kubectl 1.30+ asks for first: every group, version and resource in one answer instead of one
 * request per group version. `legacy` is /api (the core group), otherwise /apis.
 */
export function aggregatedDiscovery(legacy: boolean): Record<string, unknown> {
  const groups = servedGroups().filter((g) => (g.group === '') === legacy);
  return {
    kind: 'APIGroupDiscoveryList',
    apiVersion: 'apidiscovery.k8s.io/v2',
    metadata: {},
    items: groups.map((g) => ({
      metadata: { name: g.group, creationTimestamp: null },
      versions: g.versions.map((version) => ({
        version,
        freshness: 'Current',
        resources: servedResources(g.group, version).map((r) => ({
          resource: r.resource,
          responseKind: { group: g.group, version, kind: r.kind },
          scope: r.namespaced ? 'Namespaced' : 'Cluster',
          singularResource: r.singular,
          verbs: r.verbs,
          ...optionalLists(r),
          ...(r.subresources.length
            ? {
                subresources: r.subresources.map((sub) => ({
                  subresource: sub.name,
                  responseKind: {
                    group: sub.group ?? g.group,
                    version: sub.version ?? version,
                    kind: sub.kind ?? r.kind,
                  },
                  verbs: sub.verbs,
                })),
              }
            : {}),
        })),
      })),
    })),
  };
}

/** The media type of aggregated discovery, which a client lists in its Accept header. */
export const AGGREGATED_DISCOVERY_TYPE =
  'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';

/** Whether the Accept header asks for aggregated discovery (v2; v2beta1 is no longer served by Kubernetes 1.33). */
export function wantsAggregatedDiscovery(accept: string | undefined): boolean {
  if (!accept) return false;
  return accept.split(',').some((part) => {
    const params = part
      .split(';')
      .map((p) => p.trim().replace(/\s+/g, ''))
      .slice(1);
    return (
      params.includes('g=apidiscovery.k8s.io') &&
      params.includes('v=v2') &&
      params.includes('as=APIGroupDiscoveryList')
    );
  });
}

function resourceList(group: string, version: string): Record<string, unknown> {
  const resources: Array<Record<string, unknown>> = [];
  for (const r of servedResources(group, version)) {
    resources.push({
      name: r.resource,
      // Kubernetes lists the access reviews without a singular name.
      singularName: group === REVIEW_GROUP ? '' : r.singular,
      namespaced: r.namespaced,
      kind: r.kind,
      verbs: r.verbs,
      ...optionalLists(r),
    });
    for (const sub of r.subresources)
      resources.push({
        name: `${r.resource}/${sub.name}`,
        singularName: '',
        namespaced: r.namespaced,
        ...(sub.group !== undefined ? { group: sub.group, version: sub.version } : {}),
        kind: sub.kind ?? r.kind,
        verbs: sub.verbs,
      });
  }
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

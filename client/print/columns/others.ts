/**
 * The smaller kinds' tables, as kubectl prints them: namespaces (NAME STATUS AGE), leases
 * (NAME HOLDER AGE), controller revisions (NAME CONTROLLER REVISION AGE), node metrics
 * (NAME CPU MEMORY WINDOW AGE), and NAME AGE for anything else.
 */
import type {
  ConfigMap,
  ControllerRevision,
  KubeObject,
  Lease,
  Namespace,
  NodeMetrics,
  Secret,
  Service,
} from '../../api/types.js';
import { ageOf } from '../age.js';
import { orNone, type KindColumns } from './types.js';

const fixed = (headers: string[]) => () => headers;

export const namespaceColumns: KindColumns<Namespace> = {
  headers: fixed(['NAME', 'STATUS', 'AGE']),
  cells: (ns, now) => [
    ns.metadata?.name ?? '',
    ns.status?.phase ?? 'Active',
    ageOf(ns.metadata?.creationTimestamp, now),
  ],
};

/** kubectl's ConfigMap table: the keys of data and binaryData together. */
export const configMapColumns: KindColumns<ConfigMap> = {
  headers: fixed(['NAME', 'DATA', 'AGE']),
  cells: (cm, now) => [
    cm.metadata?.name ?? '',
    String(Object.keys(cm.data ?? {}).length + Object.keys(cm.binaryData ?? {}).length),
    ageOf(cm.metadata?.creationTimestamp, now),
  ],
};

/** kubectl's Secret table: its type and how many keys it has (never their values). */
export const secretColumns: KindColumns<Secret> = {
  headers: fixed(['NAME', 'TYPE', 'DATA', 'AGE']),
  cells: (s, now) => [
    s.metadata?.name ?? '',
    s.type ?? 'Opaque',
    String(Object.keys(s.data ?? {}).length),
    ageOf(s.metadata?.creationTimestamp, now),
  ],
};

/** kubectl's Service table; wide adds the selector. */
export const serviceColumns: KindColumns<Service> = {
  headers: (wide) => [
    'NAME',
    'TYPE',
    'CLUSTER-IP',
    'EXTERNAL-IP',
    'PORT(S)',
    'AGE',
    ...(wide ? ['SELECTOR'] : []),
  ],
  cells(svc, now, wide) {
    const spec = svc.spec ?? {};
    const ingress = (svc.status?.loadBalancer?.ingress ?? []).map((i) => i.ip || i.hostname).filter(Boolean);
    const external =
      spec.type === 'ExternalName'
        ? (spec.externalName ?? '<none>')
        : ingress.length
          ? ingress.join(',')
          : '<none>';
    const ports = (spec.ports ?? [])
      .map((p) => `${p.port}${p.nodePort ? `:${p.nodePort}` : ''}/${p.protocol ?? 'TCP'}`)
      .join(',');
    const selector = Object.entries(spec.selector ?? {})
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
    return [
      svc.metadata?.name ?? '',
      spec.type ?? 'ClusterIP',
      spec.clusterIP || '<none>',
      external,
      ports || '<none>',
      ageOf(svc.metadata?.creationTimestamp, now),
      ...(wide ? [selector || '<none>'] : []),
    ];
  },
};

export const leaseColumns: KindColumns<Lease> = {
  headers: fixed(['NAME', 'HOLDER', 'AGE']),
  cells: (lease, now) => [
    lease.metadata?.name ?? '',
    lease.spec?.holderIdentity ?? '',
    ageOf(lease.metadata?.creationTimestamp, now),
  ],
};

export const controllerRevisionColumns: KindColumns<ControllerRevision> = {
  headers: fixed(['NAME', 'CONTROLLER', 'REVISION', 'AGE']),
  cells(cr, now) {
    const owner = cr.metadata?.ownerReferences?.find((r) => r.controller);
    const controller = owner
      ? `${(owner.kind ?? '').toLowerCase()}${owner.apiVersion?.includes('/') ? `.${owner.apiVersion.split('/')[0]}` : ''}/${owner.name}`
      : '<none>';
    return [
      cr.metadata?.name ?? '',
      controller,
      String(cr.revision ?? 0),
      ageOf(cr.metadata?.creationTimestamp, now),
    ];
  },
};

export const nodeMetricsColumns: KindColumns<NodeMetrics> = {
  headers: fixed(['NAME', 'CPU', 'MEMORY', 'WINDOW', 'AGE']),
  cells: (m, now) => [
    m.metadata?.name ?? '',
    orNone(m.usage?.cpu),
    orNone(m.usage?.memory),
    orNone(m.window),
    ageOf(m.timestamp ?? m.metadata?.creationTimestamp, now),
  ],
};

export const genericColumns: KindColumns<KubeObject> = {
  headers: fixed(['NAME', 'AGE']),
  cells: (o, now) => [o.metadata?.name ?? '', ageOf(o.metadata?.creationTimestamp, now)],
};

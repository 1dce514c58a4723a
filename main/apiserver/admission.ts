/**
 * Built-in admission (Kubernetes' NamespaceLifecycle and DefaultTolerationSeconds): what a
 * write must satisfy beyond the object's own validity, and defaults that depend on policy.
 */
import { ApiError } from '../../client/api/errors.js';
import { kindInfo, type KindInfo } from '../../client/api/kinds.js';
import type { Identity } from '../../client/api/local.js';
import type { KubeObject, Namespace, Pod, Toleration } from '../../client/api/types.js';

export interface AdmissionContext {
  op: 'create' | 'update' | 'delete';
  id: Identity;
  info: KindInfo;
  object: KubeObject;
  old?: KubeObject;
  subresource?: string;
  now: number;
  lookup(info: KindInfo, namespace: string | undefined, name: string): Promise<KubeObject | undefined>;
}

/** Namespaces every cluster has; they cannot be deleted. */
export const PROTECTED_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'] as const;

/** Tolerations every pod gets unless it brings its own (Kubernetes: 300 s). */
export const DEFAULT_TOLERATION_SECONDS = 300;

export async function admitCreate(ctx: AdmissionContext): Promise<void> {
  if (ctx.info.namespaced) await requireLiveNamespace(ctx);
  if (ctx.info.kind === 'Pod') addDefaultTolerations(ctx.object as Pod);
}

export function admitDelete(ctx: AdmissionContext): void {
  if (
    ctx.info.kind === 'Namespace' &&
    (PROTECTED_NAMESPACES as readonly string[]).includes(ctx.object.metadata?.name ?? '')
  ) {
    throw new ApiError(
      'Forbidden',
      `namespace "${ctx.object.metadata?.name}" is part of every cluster and cannot be deleted`,
      {
        kind: 'Namespace',
        name: ctx.object.metadata?.name,
      },
    );
  }
}

async function requireLiveNamespace(ctx: AdmissionContext): Promise<void> {
  const name = ctx.object.metadata?.namespace ?? '';
  const ns = (await ctx.lookup(kindInfo('Namespace'), undefined, name)) as Namespace | undefined;
  if (!ns) {
    throw new ApiError(
      'NotFound',
      `namespace "${name}" not found; create it first (labctl create namespace ${name})`,
      {
        kind: 'Namespace',
        name,
      },
    );
  }
  if (ns.metadata?.deletionTimestamp || ns.status?.phase === 'Terminating') {
    throw new ApiError(
      'Forbidden',
      `unable to create new content in namespace "${name}" because it is being terminated; wait for it to go, then create it again`,
      { kind: ctx.info.kind, name: ctx.object.metadata?.name, namespace: name },
    );
  }
}

function addDefaultTolerations(pod: Pod): void {
  const spec = (pod.spec ??= {});
  const tolerations: Toleration[] = spec.tolerations ?? [];
  for (const key of ['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable']) {
    const covered = tolerations.some(
      (t) =>
        (t.operator === 'Exists' && !t.key) || (t.key === key && (!t.effect || t.effect === 'NoExecute')),
    );
    if (!covered)
      tolerations.push({
        key,
        operator: 'Exists',
        effect: 'NoExecute',
        tolerationSeconds: DEFAULT_TOLERATION_SECONDS,
      });
  }
  spec.tolerations = tolerations;
}

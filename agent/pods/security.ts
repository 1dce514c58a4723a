/**
 * Who a container runs as, and what it may do, from its pod's and its own securityContext and
 * the node's settings (the kubelet's security context and runAsNonRoot checks): the user
 * (runAsUser, else the node's --pod-user, else the agent's own user for a process; an image's
 * own user for an image), group, supplementary groups (supplementalGroups and fsGroup),
 * no_new_privs, capabilities. Refusals are CreateContainerConfigError messages.
 */
import type { Container, Pod } from '../../client/api/types.js';
import type { ContainerSecurity } from '../runtime/types.js';
import { userByUid } from './users.js';

export interface NodeSecurity {
  /** The uid the agent runs as (0: it may start containers as anyone). */
  agentUid: number;
  /** --pod-user: who process containers without runAsUser run as. */
  podUser?: { uid: number; gid: number };
  /** --refuse-root-pods: no container runs as root. */
  refuseRoot?: boolean;
  /** uid → primary gid and home (from /etc/passwd). */
  lookup?: (uid: number) => { gid: number; home: string } | undefined;
}

/** Kubernetes' format of the pod in these messages: "name_namespace(uid)". */
const podRef = (pod: Pod) => `"${pod.metadata?.name}_${pod.metadata?.namespace}(${pod.metadata?.uid})"`;

const NOGROUP = 65534;

export function containerSecurity(
  pod: Pod,
  container: Container,
  node: NodeSecurity,
): { security: ContainerSecurity } | { error: string } {
  const podSc = pod.spec?.securityContext ?? {};
  const sc = container.securityContext ?? {};
  const image = !!container.image;
  const where = `(pod: ${podRef(pod)}, container: ${container.name})`;
  const lookup = node.lookup ?? ((uid: number) => userByUid(uid));
  const explicitUid = sc.runAsUser ?? podSc.runAsUser;
  const nonRoot = sc.runAsNonRoot ?? podSc.runAsNonRoot ?? false;
  const uid = explicitUid ?? (image ? undefined : (node.podUser?.uid ?? node.agentUid));
  if (nonRoot) {
    if (explicitUid === 0) return { error: `container's runAsUser breaks non-root policy ${where}` };
    if (uid === undefined)
      return {
        error: `container has runAsNonRoot and kubelab does not inspect images for their user: set runAsUser ${where}`,
      };
    if (uid === 0) return { error: `container has runAsNonRoot and image will run as root ${where}` };
  }
  if (node.refuseRoot && (uid === 0 || uid === undefined))
    return {
      error: `this node runs no container as root (kubelab-agent --refuse-root-pods): set securityContext.runAsUser to a non-zero uid ${where}`,
    };
  if (!image && node.agentUid !== 0 && uid !== node.agentUid)
    return {
      error: `the agent runs as uid ${node.agentUid} and cannot start a process as uid ${uid}: run kubelab-agent as root (its systemd unit does), or leave runAsUser unset ${where}`,
    };
  const addCaps = (sc.capabilities?.add ?? []).map((c) => c.toUpperCase().replace(/^CAP_/, ''));
  if (!image && addCaps.length && uid !== 0)
    return {
      error: `capabilities.add needs an image container: a process started as uid ${uid} cannot be given capabilities ${where}`,
    };
  const entry = uid !== undefined ? lookup(uid) : undefined;
  const gid =
    sc.runAsGroup ??
    podSc.runAsGroup ??
    (uid === undefined ? undefined : uid === node.podUser?.uid ? node.podUser.gid : (entry?.gid ?? NOGROUP));
  const groups = [
    ...new Set([
      ...(podSc.supplementalGroups ?? []),
      ...(podSc.fsGroup !== undefined ? [podSc.fsGroup] : []),
    ]),
  ];
  return {
    security: {
      ...(uid !== undefined ? { uid } : {}),
      ...(gid !== undefined ? { gid } : {}),
      groups,
      ...(podSc.fsGroup !== undefined
        ? { fileGroup: podSc.fsGroup }
        : gid !== undefined
          ? { fileGroup: gid }
          : {}),
      noNewPrivs: sc.allowPrivilegeEscalation === false,
      dropCaps: (sc.capabilities?.drop ?? []).map((c) => c.toUpperCase().replace(/^CAP_/, '')),
      addCaps,
      privileged: sc.privileged ?? false,
      ...(!image && uid !== undefined && uid !== node.agentUid ? { home: entry?.home ?? '/' } : {}),
    },
  };
}

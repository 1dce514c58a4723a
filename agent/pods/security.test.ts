import { describe, expect, it } from 'vitest';
import type { Container, Pod, PodSecurityContext, SecurityContext } from '../../client/api/types.js';
import { containerSecurity, type NodeSecurity } from './security.js';

const root: NodeSecurity = {
  agentUid: 0,
  lookup: (uid) => (uid === 1000 ? { gid: 1000, home: '/home/me' } : undefined),
};

function pod(podSc: PodSecurityContext = {}, sc: SecurityContext = {}, image?: string): [Pod, Container] {
  const container: Container = {
    name: 'c',
    ...(image ? { image } : { command: ['x'] }),
    securityContext: sc,
  };
  return [
    {
      metadata: { name: 'p', namespace: 'ns', uid: 'u1' },
      spec: { securityContext: podSc, containers: [container] },
    },
    container,
  ];
}

describe('who a container runs as', () => {
  it.each([
    ['the agent, by default', {}, {}, root, { uid: 0, gid: 65534 }],
    ['the node --pod-user', {}, {}, { ...root, podUser: { uid: 999, gid: 998 } }, { uid: 999, gid: 998 }],
    [
      'runAsUser, group from /etc/passwd',
      { runAsUser: 1000 },
      {},
      root,
      { uid: 1000, gid: 1000, home: '/home/me' },
    ],
    [
      'runAsUser without a passwd entry: nogroup, home /',
      { runAsUser: 65534 },
      {},
      root,
      { uid: 65534, gid: 65534, home: '/' },
    ],
    [
      'the container overrides the pod',
      { runAsUser: 1000, runAsGroup: 5 },
      { runAsUser: 7 },
      root,
      { uid: 7, gid: 5 },
    ],
  ])('%s', (_why, podSc, sc, node, expected) => {
    const [p, c] = pod(podSc, sc);
    const r = containerSecurity(p, c, node);
    expect('security' in r && r.security).toMatchObject(expected);
  });

  it('groups: supplementalGroups and fsGroup; fsGroup owns the files; no_new_privs and capabilities', () => {
    const [p, c] = pod(
      { runAsUser: 1000, supplementalGroups: [10, 20], fsGroup: 30 },
      { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL', 'cap_net_raw'] } },
    );
    const r = containerSecurity(p, c, root);
    expect('security' in r && r.security).toMatchObject({
      groups: [10, 20, 30],
      fileGroup: 30,
      noNewPrivs: true,
      dropCaps: ['ALL', 'NET_RAW'],
    });
  });

  it.each([
    [
      'runAsNonRoot with runAsUser 0',
      { runAsNonRoot: true },
      { runAsUser: 0 },
      root,
      `container's runAsUser breaks non-root policy (pod: "p_ns(u1)", container: c)`,
    ],
    [
      'runAsNonRoot, no user, the node default is root',
      { runAsNonRoot: true },
      {},
      root,
      'container has runAsNonRoot and image will run as root (pod: "p_ns(u1)", container: c)',
    ],
    [
      '--refuse-root-pods',
      {},
      {},
      { ...root, refuseRoot: true },
      'this node runs no container as root (kubelab-agent --refuse-root-pods): set securityContext.runAsUser to a non-zero uid (pod: "p_ns(u1)", container: c)',
    ],
    [
      'an agent that is not root cannot switch users',
      { runAsUser: 1000 },
      {},
      { agentUid: 500 },
      'the agent runs as uid 500 and cannot start a process as uid 1000: run kubelab-agent as root (its systemd unit does), or leave runAsUser unset (pod: "p_ns(u1)", container: c)',
    ],
    [
      'capabilities.add for a process run as a user',
      { runAsUser: 1000 },
      { capabilities: { add: ['NET_ADMIN'] } },
      root,
      'capabilities.add needs an image container: a process started as uid 1000 cannot be given capabilities (pod: "p_ns(u1)", container: c)',
    ],
  ])('refuses: %s', (_why, podSc, sc, node, message) => {
    const [p, c] = pod(podSc, sc);
    expect(containerSecurity(p, c, node)).toEqual({ error: message });
  });

  it('an image keeps its own user unless the pod names one; runAsNonRoot then needs one', () => {
    const [p, c] = pod({}, {}, 'nginx:1');
    const r = containerSecurity(p, c, { ...root, podUser: { uid: 999, gid: 999 } });
    expect('security' in r && r.security.uid).toBeUndefined();
    const [p2, c2] = pod({ runAsNonRoot: true }, {}, 'nginx:1');
    expect(containerSecurity(p2, c2, root)).toMatchObject({
      error: expect.stringMatching(/does not inspect images/),
    });
  });
});

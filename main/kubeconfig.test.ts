import { describe, expect, it } from 'vitest';
import { kubeconfigFor, mergeKubeconfig } from './kubeconfig.js';

const made = kubeconfigFor({
  server: 'https://10.0.0.5:6443',
  caPem: '-----BEGIN CERTIFICATE-----\nX\n-----END CERTIFICATE-----\n',
  token: 'abc.def',
  context: 'kubelab',
  user: 'kubelab-admin',
});

describe('kubelab kubeconfig', () => {
  it('makes one context with the CA inline and a token', () => {
    expect(made.clusters).toEqual([
      {
        name: 'kubelab',
        cluster: {
          server: 'https://10.0.0.5:6443',
          'certificate-authority-data': Buffer.from(
            '-----BEGIN CERTIFICATE-----\nX\n-----END CERTIFICATE-----\n',
          ).toString('base64'),
        },
      },
    ]);
    expect(made.users).toEqual([{ name: 'kubelab-admin', user: { token: 'abc.def' } }]);
    expect(made['current-context']).toBe('kubelab');
  });

  it("merges into someone's config: replaces entries of the same name, keeps the others and their current context", () => {
    const existing = {
      apiVersion: 'v1' as const,
      kind: 'Config' as const,
      clusters: [
        { name: 'work', cluster: { server: 'https://work:6443' } },
        { name: 'kubelab', cluster: { server: 'https://old:6443' } },
      ],
      users: [{ name: 'me', user: { token: 't' } }],
      contexts: [{ name: 'work', context: { cluster: 'work', user: 'me' } }],
      'current-context': 'work',
      preferences: { colors: true },
    };
    const merged = mergeKubeconfig(existing, made);
    expect(merged.clusters.map((c) => [c.name, (c.cluster as { server: string }).server])).toEqual([
      ['work', 'https://work:6443'],
      ['kubelab', 'https://10.0.0.5:6443'],
    ]);
    expect(merged.users.map((u) => u.name)).toEqual(['me', 'kubelab-admin']);
    expect(merged.contexts.map((c) => c.name)).toEqual(['work', 'kubelab']);
    expect(merged['current-context']).toBe('work');
    expect(merged.preferences).toEqual({ colors: true });
    // An empty file takes this context as its current one.
    expect(mergeKubeconfig(null, made)['current-context']).toBe('kubelab');
  });
});

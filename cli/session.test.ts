import { describe, expect, it } from 'vitest';
import { encodeCa, type LabConfig } from './config.js';
import { resolveTarget } from './session.js';

const cfg: LabConfig = {
  apiVersion: 'kubelab/v1',
  kind: 'Config',
  'current-context': 'home',
  contexts: [
    {
      name: 'home',
      server: 'https://10.0.0.1:6443',
      'certificate-authority-data': encodeCa('CA-HOME'),
      token: 't-home',
      namespace: 'lab',
    },
    {
      name: 'work',
      server: 'https://10.0.0.2:6443',
      'certificate-authority-data': encodeCa('CA-WORK'),
      token: 't-work',
    },
  ],
};

describe('resolveTarget: flags over environment over the context', () => {
  it('takes the current context', () => {
    expect(resolveTarget({}, {}, cfg)).toMatchObject({
      origin: { source: 'context', contextName: 'home' },
      server: 'https://10.0.0.1:6443',
      caPem: 'CA-HOME',
      token: 't-home',
      namespace: 'lab',
    });
  });

  it('lets the environment pick another context and override parts, and flags override both', () => {
    expect(resolveTarget({}, { KUBELAB_CONTEXT: 'work' }, cfg)).toMatchObject({
      token: 't-work',
      namespace: 'default',
    });
    expect(resolveTarget({}, { KUBELAB_TOKEN: 'env', KUBELAB_NAMESPACE: 'ns-env' }, cfg)).toMatchObject({
      token: 'env',
      namespace: 'ns-env',
    });
    expect(
      resolveTarget(
        { token: 'flag', namespace: 'ns-flag', context: 'work' },
        { KUBELAB_TOKEN: 'env', KUBELAB_CONTEXT: 'home' },
        cfg,
      ),
    ).toMatchObject({
      origin: { contextName: 'work' },
      token: 'flag',
      namespace: 'ns-flag',
    });
  });

  it("does not send a context's CA to another server, and says what is missing", () => {
    expect(() => resolveTarget({ server: 'https://elsewhere:6443' }, {}, cfg)).toThrow(
      /no CA certificate for https:\/\/elsewhere:6443/,
    );
    expect(() => resolveTarget({ context: 'gone' }, {}, cfg)).toThrow(/context "gone" does not exist/);
    expect(() => resolveTarget({}, {}, { ...cfg, 'current-context': undefined })).toThrow(
      /no server is configured/,
    );
  });

  it("knows the context's own server however it is written, and where an address came from", () => {
    for (const server of ['10.0.0.1', '10.0.0.1:6443', 'https://10.0.0.1', 'https://10.0.0.1:6443/']) {
      expect(resolveTarget({ server }, {}, cfg)).toMatchObject({
        server: 'https://10.0.0.1:6443',
        caPem: 'CA-HOME',
        origin: { source: '--server', contextName: 'home' },
      });
    }
    expect(() => resolveTarget({}, { KUBELAB_SERVER: '10.0.0.9:7443' }, cfg)).toThrow(
      expect.objectContaining({
        server: 'https://10.0.0.9:7443',
        origin: { source: 'KUBELAB_SERVER', contextName: 'home', contextServer: 'https://10.0.0.1:6443' },
      }),
    );
    expect(() => resolveTarget({ server: 'https://' }, {}, cfg)).toThrow(/is not a server address/);
  });
});

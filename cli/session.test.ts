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
      contextName: 'home',
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
      contextName: 'work',
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
});

import { describe, expect, it } from 'vitest';
import { threeWayMergePatch } from './threeway.js';

describe('threeWayMergePatch (kubectl apply)', () => {
  const live = {
    metadata: { name: 'web', labels: { app: 'web', hand: 'made' }, uid: 'u1' },
    spec: {
      nodeName: 'n1',
      restartPolicy: 'Always',
      containers: [{ name: 'a', image: 'x:1', imagePullPolicy: 'IfNotPresent' }],
    },
    status: { phase: 'Running' },
  };

  it('is empty when the manifest matches what is live, defaults and status aside', () => {
    const config = { metadata: { name: 'web', labels: { app: 'web' } }, spec: { nodeName: 'n1' } };
    expect(threeWayMergePatch(config, config, live)).toEqual({});
  });

  it('sets what changed and replaces lists whole', () => {
    const original = { metadata: { name: 'web' }, spec: { containers: [{ name: 'a', image: 'x:1' }] } };
    const modified = { metadata: { name: 'web' }, spec: { containers: [{ name: 'a', image: 'x:2' }] } };
    expect(threeWayMergePatch(original, modified, live)).toEqual({
      spec: { containers: [{ name: 'a', image: 'x:2' }] },
    });
  });

  it('removes only what the previous manifest set and this one dropped', () => {
    const original = { metadata: { name: 'web', labels: { app: 'web' } }, spec: { nodeName: 'n1' } };
    const modified = { metadata: { name: 'web' } };
    expect(threeWayMergePatch(original, modified, live)).toEqual({
      metadata: { labels: { app: null } },
      spec: { nodeName: null },
    });
  });

  it('without a previous manifest, removes nothing', () => {
    expect(threeWayMergePatch(undefined, { metadata: { name: 'web' } }, live)).toEqual({});
  });
});

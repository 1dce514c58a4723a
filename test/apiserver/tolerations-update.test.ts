/**
 * Updating a pod's tolerations (Kubernetes' validateOnlyAddedTolerations): tolerations may be
 * added and an existing one's tolerationSeconds changed; removing or otherwise changing one is
 * refused, at `spec.tolerations`.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../client/api/errors.js';
import type { Pod, Toleration } from '../../client/api/types.js';
import { clone } from '../../client/util/objects.js';
import { startTestApiServer, type TestApiServer } from '../support/apiserver.js';

let t: TestApiServer;
beforeEach(async () => {
  t = await startTestApiServer();
});
afterEach(async () => t.close());

const DEDICATED: Toleration = {
  key: 'dedicated',
  operator: 'Equal',
  value: 'gpu',
  effect: 'NoExecute',
  tolerationSeconds: 60,
};
const FORBIDDEN = {
  field: 'spec.tolerations',
  type: 'FieldValueForbidden',
  message: 'existing toleration can not be modified except its tolerationSeconds',
};

async function createPod(tolerations: Toleration[]): Promise<Pod> {
  return t.admin.create<Pod>({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', namespace: 'default' },
    spec: { containers: [{ name: 'c', image: 'nginx:1' }], tolerations },
  });
}

/** The pod with its tolerations replaced (the defaults admission added stay as they were). */
function withTolerations(pod: Pod, edit: (ts: Toleration[]) => Toleration[]): Pod {
  const next = clone(pod);
  next.spec!.tolerations = edit(clone(pod.spec!.tolerations!));
  return next;
}

async function rejection(p: Promise<unknown>): Promise<ApiError> {
  try {
    await p;
  } catch (err) {
    return err as ApiError;
  }
  throw new Error('expected the request to fail');
}

const dedicatedOf = (pod: Pod) => pod.spec!.tolerations!.find((x) => x.key === 'dedicated');

describe("updating a pod's tolerations", () => {
  it('accepts a changed tolerationSeconds, longer, shorter or forever, and stores it', async () => {
    const pod = await createPod([DEDICATED]);
    const longer = await t.admin.update(
      withTolerations(pod, (ts) =>
        ts.map((x) => (x.key === 'dedicated' ? { ...x, tolerationSeconds: 3600 } : x)),
      ),
    );
    expect(dedicatedOf(longer)?.tolerationSeconds).toBe(3600);
    const shorter = await t.admin.update(
      withTolerations(longer, (ts) =>
        ts.map((x) => (x.key === 'dedicated' ? { ...x, tolerationSeconds: 5 } : x)),
      ),
    );
    expect(dedicatedOf(shorter)?.tolerationSeconds).toBe(5);
    const forever = await t.admin.update(
      withTolerations(shorter, (ts) =>
        ts.map((x) => {
          if (x.key !== 'dedicated') return x;
          const { tolerationSeconds: _dropped, ...rest } = x;
          return rest;
        }),
      ),
    );
    expect(dedicatedOf(forever)).toEqual({
      key: 'dedicated',
      operator: 'Equal',
      value: 'gpu',
      effect: 'NoExecute',
    });
    const stored = await t.admin.get('Pod', 'web', { namespace: 'default' });
    expect(dedicatedOf(stored)?.tolerationSeconds).toBeUndefined();
  });

  it('accepts the default not-ready toleration given more time with a merge patch', async () => {
    const pod = await createPod([]);
    const tolerations = pod.spec!.tolerations!.map((x) =>
      x.key === 'node.kubernetes.io/not-ready' ? { ...x, tolerationSeconds: 900 } : x,
    );
    const patched = await t.admin.patch('Pod', 'web', { spec: { tolerations } }, { namespace: 'default' });
    expect(
      patched.spec?.tolerations?.find((x) => x.key === 'node.kubernetes.io/not-ready')?.tolerationSeconds,
    ).toBe(900);
  });

  it('accepts added tolerations', async () => {
    const pod = await createPod([DEDICATED]);
    const added = await t.admin.update(
      withTolerations(pod, (ts) => [...ts, { key: 'zone', operator: 'Exists', effect: 'NoSchedule' }]),
    );
    expect(added.spec?.tolerations?.map((x) => x.key)).toContain('zone');
  });

  it.each<[string, (x: Toleration) => Toleration | undefined]>([
    ['removed', () => undefined],
    ['with another value', (x) => ({ ...x, value: 'tpu' })],
    ['with another effect', (x) => ({ ...x, effect: 'NoSchedule', tolerationSeconds: undefined })],
    ['with another operator', (x) => ({ ...x, operator: 'Exists', value: undefined })],
    ['with the operator left out (not the same as Equal)', (x) => ({ ...x, operator: undefined })],
  ])('refuses an existing toleration %s, naming spec.tolerations', async (_what, change) => {
    const pod = await createPod([DEDICATED]);
    const err = await rejection(
      t.admin.update(
        withTolerations(pod, (ts) =>
          ts.flatMap((x) => {
            if (x.key !== 'dedicated') return [x];
            const changed = change(x);
            if (!changed) return [];
            // Undefined fields are left out, as a client sending JSON would.
            return [JSON.parse(JSON.stringify(changed)) as Toleration];
          }),
        ),
      ),
    );
    expect(err.reason).toBe('Invalid');
    expect(err.causes).toEqual([expect.objectContaining(FORBIDDEN)]);
    expect(err.message).toContain(
      'spec.tolerations: Forbidden: existing toleration can not be modified except its tolerationSeconds',
    );
    expect(dedicatedOf(await t.admin.get('Pod', 'web', { namespace: 'default' }))).toEqual(DEDICATED);
  });

  it('reports a removed toleration and another changed field each at its own path', async () => {
    const pod = await createPod([DEDICATED]);
    const next = withTolerations(pod, (ts) => ts.filter((x) => x.key !== 'dedicated'));
    next.spec!.restartPolicy = 'Never';
    const err = await rejection(t.admin.update(next));
    expect(err.causes.map((c) => c.field)).toEqual(['spec.tolerations', 'spec']);
  });
});

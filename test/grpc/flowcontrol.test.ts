/**
 * Priority and fairness over the wire: a client flooding a control plane with more requests than
 * its priority level has seats and queue gets TooManyRequests (gRPC RESOURCE_EXHAUSTED, REST 429
 * with Retry-After) and keeps its connection, while a node's requests, in their own level, go
 * through at once; /metrics counts the refusals.
 */
import { request } from 'node:https';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../client/api/errors.js';
import type { Namespace, Node } from '../../client/api/types.js';
import type { FlowControlConfig } from '../../main/apiserver/flowcontrol/levels.js';
import { startTestControlPlane, type TestControlPlane } from '../support/controlplane.js';

let t: TestControlPlane | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

/** A control plane whose priority levels have 8 seats and 64 waiting, but for `small`. */
function startWithLevels(small: Partial<FlowControlConfig>): Promise<TestControlPlane> {
  const roomy = { seats: 8, queueLength: 64, queueWaitMs: 15_000 };
  return startTestControlPlane({
    controllers: false,
    flowControl: {
      'node-high': roomy,
      system: roomy,
      'workload-high': roomy,
      'global-default': roomy,
      ...small,
    },
  });
}

const namespace = (name: string): Namespace => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });

function restCreate(
  cp: TestControlPlane,
  name: string,
): Promise<{ status: number; retryAfter?: string; body: string }> {
  const body = JSON.stringify(namespace(name));
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: cp.cp.port,
        method: 'POST',
        path: '/api/v1/namespaces',
        ca: cp.caPem,
        headers: { authorization: `Bearer ${cp.cp.adminToken}`, 'content-type': 'application/json' },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (d: string) => (text += d));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            retryAfter: res.headers['retry-after'] as string,
            body: text,
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('API priority and fairness', () => {
  it("refuses a flood past its level's seats and queue with a retry hint, keeps the connection, and lets a node through", async () => {
    t = await startWithLevels({ 'global-default': { seats: 2, queueLength: 4, queueWaitMs: 15_000 } });
    // No retries: the test sees every refusal as the client gets it.
    const user = t.client({ retry: { attempts: 1 } });
    const nodeToken = t.cp.tokens.create({ name: 'system:node:pi-1', role: 'node', nodeName: 'pi-1' }).token;
    const node = t.client({ token: nodeToken, retry: { attempts: 1 } });
    // Two reads that wait for a resourceVersion the store has not reached (3 s) hold both seats
    // of the user level meanwhile, as slow requests of a real flood would.
    const future = String(Number((await user.list('Namespace')).resourceVersion) + 1_000_000);
    const holdSeats = async () => {
      const holding = [0, 1].map(() =>
        user.get('Namespace', 'default', { resourceVersion: future }).catch((e: unknown) => e),
      );
      await expect.poll(() => t!.cp.api.flowControl.snapshot()['global-default'].executing).toBe(2);
      return holding;
    };
    const held = await holdSeats();
    const flood = Promise.allSettled(
      Array.from({ length: 60 }, (_, i) => user.create(namespace(`flood-${i}`))),
    );
    const registered = node.create<Node>({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'pi-1' } });
    // The node's request runs while the people's level is full.
    expect((await registered).metadata?.name).toBe('pi-1');
    expect(t.cp.api.flowControl.snapshot()['global-default'].executing).toBe(2);
    const outcomes = await flood;
    await Promise.all(held);

    // Four wait in the queue; the other 56 are refused at once.
    const refused = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason as unknown] : []));
    expect(refused).toHaveLength(56);
    for (const err of refused) {
      expect(err).toBeInstanceOf(ApiError);
      expect((err as ApiError).reason).toBe('TooManyRequests');
      expect((err as ApiError).details.retryAfterSeconds).toBe(1);
      expect((err as ApiError).message).toMatch(/send the request again after 1 s/);
    }
    // Refused means not done: exactly the accepted ones exist.
    const created = outcomes.filter((o) => o.status === 'fulfilled').length;
    const names = (await user.list('Namespace')).items.map((n) => n.metadata!.name!);
    expect(names.filter((n) => n.startsWith('flood-'))).toHaveLength(created);

    // The same connection still answers, and the typed client's retries ride out a flood.
    const patient = t.client();
    await Promise.all(Array.from({ length: 20 }, (_, i) => patient.create(namespace(`patient-${i}`))));
    expect(
      (await patient.list('Namespace')).items.filter((n) => n.metadata?.name?.startsWith('patient-')),
    ).toHaveLength(20);

    // REST: 429 with Retry-After and a Status that says what to do.
    const holding = await holdSeats();
    const rest = await Promise.all(Array.from({ length: 10 }, (_, i) => restCreate(t!, `rest-${i}`)));
    await Promise.all(holding);
    const tooMany = rest.filter((r) => r.status === 429);
    expect(tooMany).toHaveLength(6);
    expect(rest.every((r) => r.status === 201 || r.status === 429)).toBe(true);
    for (const r of tooMany) {
      expect(r.retryAfter).toBe('1');
      expect(JSON.parse(r.body)).toMatchObject({ kind: 'Status', reason: 'TooManyRequests', code: 429 });
    }

    const metrics = await t.cp.metrics.metrics();
    const rejectedLine = metrics
      .split('\n')
      .find((l) =>
        l.startsWith(
          'apiserver_flowcontrol_rejected_requests_total{priority_level="global-default",reason="queue-full"}',
        ),
      );
    // The patient client's refused tries count too.
    expect(Number(rejectedLine?.split(' ').pop())).toBeGreaterThanOrEqual(refused.length + tooMany.length);
  });

  it('holds back a connection that keeps flooding after refusals (no request bodies for the hint), without dropping it', async () => {
    t = await startWithLevels({ 'global-default': { seats: 1, queueLength: 1, queueWaitMs: 15_000 } });
    const flooder = t.client({ retry: { attempts: 1 } });
    const nodeToken = t.cp.tokens.create({ name: 'system:node:pi-1', role: 'node', nodeName: 'pi-1' }).token;
    const node = t.client({ token: nodeToken, retry: { attempts: 1 } });
    await flooder.list('Namespace');
    const braked = async () =>
      Number(
        (await t!.cp.metrics.metrics())
          .split('\n')
          .find((l) => l.startsWith('kubelab_apiserver_braked_connections '))
          ?.split(' ')
          .pop(),
      );
    expect(await braked()).toBe(0);
    const flood = Promise.allSettled(
      Array.from({ length: 40 }, (_, i) => flooder.create(namespace(`brake-${i}`))),
    );
    await expect.poll(braked, { interval: 20 }).toBe(1);
    // Braked, the connection's next request is not even read until the hint (1 s) has passed,
    // while other connections are served.
    const late = flooder.create(namespace('late'));
    await node.create<Node>({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'pi-1' } });
    const observer = t.client();
    const lateExists = async () =>
      (await observer.list('Namespace')).items.some((n) => n.metadata?.name === 'late');
    let checksWhileBraked = 0;
    for (;;) {
      const exists = await lateExists();
      if ((await braked()) === 0) break;
      expect(exists).toBe(false);
      checksWhileBraked++;
    }
    expect(checksWhileBraked).toBeGreaterThan(0);
    expect((await late).metadata?.name).toBe('late');
    // Nothing was dropped: every flooded call got an answer, a namespace or a refusal with a hint.
    for (const o of await flood) {
      if (o.status === 'fulfilled') continue;
      expect(o.reason).toBeInstanceOf(ApiError);
      expect((o.reason as ApiError).reason).toBe('TooManyRequests');
    }
    expect((await flooder.get('Namespace', 'default')).metadata?.name).toBe('default');
  });

  it("runs a node's heartbeat (its Node, its Lease) in node-high while the rest of what nodes send is queued in system", async () => {
    t = await startWithLevels({ system: { seats: 2, queueLength: 2, queueWaitMs: 15_000 } });
    const admin = t.client();
    const nodeToken = t.cp.tokens.create({ name: 'system:node:pi-1', role: 'node', nodeName: 'pi-1' }).token;
    const node = t.client({ token: nodeToken, retry: { attempts: 1 } });
    await node.create<Node>({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'pi-1' } });
    // Two reads of the node's pods that wait for a resourceVersion the store has not reached
    // hold both seats of the system level, as a fleet's pod status writes would.
    const future = String(Number((await admin.list('Namespace')).resourceVersion) + 1_000_000);
    const holding = [0, 1].map(() =>
      node
        .list('Pod', { fieldSelector: 'spec.nodeName=pi-1', resourceVersion: future })
        .catch((e: unknown) => e),
    );
    await expect.poll(() => t!.cp.api.flowControl.snapshot().system.executing).toBe(2);
    const renewed = await node.create({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'pi-1', namespace: 'kube-node-lease' },
      spec: { holderIdentity: 'pi-1', leaseDurationSeconds: 40 },
    });
    expect(renewed.metadata?.name).toBe('pi-1');
    const reported = await node.updateStatus<Node>({
      ...(await node.get('Node', 'pi-1')),
      status: { conditions: [{ type: 'Ready', status: 'True' }] },
    });
    expect(reported.status?.conditions?.[0]?.type).toBe('Ready');
    expect(t.cp.api.flowControl.snapshot().system.executing).toBe(2);
    await Promise.all(holding);
  });
});

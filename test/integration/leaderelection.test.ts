/**
 * Two `kubelab controller-manager` processes against one etcd-backed control plane: at no
 * moment do both lead (checked every 50 ms), the leader's controllers do the work, and when
 * the leader is killed the other takes over within the 15 s lease.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Pod } from '../../client/api/types.js';
import { startTestControlPlane, type TestControlPlane } from '../support/controlplane.js';
import { freePort, startEtcd, type EtcdServer } from '../support/etcd.js';

const BIN = join(import.meta.dirname, '..', '..', 'bin', 'kubelab.mjs');

let etcd: EtcdServer;
let t: TestControlPlane;
const children: ChildProcess[] = [];

beforeAll(async () => {
  etcd = await startEtcd();
  t = await startTestControlPlane({
    store: 'etcd',
    etcdEndpoints: [etcd.endpoint],
    etcdPrefix: '/le-test',
    controllers: false,
  });
});
afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await t.close();
  await etcd.stop();
});

interface Manager {
  identity: string;
  child: ChildProcess;
  metricsPort: number;
  alive: boolean;
}

async function startManager(identity: string): Promise<Manager> {
  const metricsPort = await freePort();
  const child = spawn(
    process.execPath,
    [
      BIN,
      'controller-manager',
      '--server',
      `127.0.0.1:${t.cp.port}`,
      '--token',
      t.cp.adminToken,
      '--ca-file',
      t.cp.pki!.caPath,
      '--identity',
      identity,
      '--metrics-listen',
      `127.0.0.1:${metricsPort}`,
      '--log-level',
      'warn',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  children.push(child);
  const m: Manager = { identity, child, metricsPort, alive: true };
  child.on('exit', () => (m.alive = false));
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const deadline = Date.now() + 30_000;
  while (!out.includes('kubelab controller-manager')) {
    if (!m.alive) throw new Error(`controller-manager ${identity} exited: ${out}`);
    if (Date.now() > deadline) throw new Error(`controller-manager ${identity} did not start: ${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return m;
}

async function leads(m: Manager): Promise<boolean> {
  if (!m.alive) return false;
  try {
    const text = await (await fetch(`http://127.0.0.1:${m.metricsPort}/metrics`)).text();
    return /leader_election_master_status\{name="kube-controller-manager"\} 1\b/.test(text);
  } catch {
    return false;
  }
}

const orphan = (name: string): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name,
    ownerReferences: [
      { apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'gone', uid: '11111111-1111-1111-1111-111111111111' },
    ],
  },
  spec: { containers: [{ name: 'c', command: ['true'] }] },
});

async function collected(name: string, ms = 15_000): Promise<void> {
  const c = t.cp.client();
  const deadline = Date.now() + ms;
  for (;;) {
    const present = await c.get('Pod', name).then(
      () => true,
      () => false,
    );
    if (!present) return;
    if (Date.now() > deadline) throw new Error(`the garbage collector did not delete ${name}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

it('never has two leaders, and fails over within the lease after the leader is killed', async () => {
  const managers = [await startManager('cm-a'), await startManager('cm-b')];
  let violations = 0;
  let polling = true;
  const leaderLog: string[][] = [];
  const poller = (async () => {
    while (polling) {
      const leading = (
        await Promise.all(managers.map(async (m) => ((await leads(m)) ? m.identity : '')))
      ).filter(Boolean);
      if (leading.length > 1) violations++;
      leaderLog.push(leading);
      await new Promise((r) => setTimeout(r, 50));
    }
  })();

  try {
    const first = await (async () => {
      const deadline = Date.now() + 15_000;
      for (;;) {
        for (const m of managers) if (await leads(m)) return m;
        if (Date.now() > deadline) throw new Error('no leader was elected');
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    const other = managers.find((m) => m !== first)!;

    // The leader's garbage collector does the work.
    await t.cp.client().create(orphan('orphan-1'));
    await collected('orphan-1');

    first.child.kill('SIGKILL');
    const killedAt = Date.now();
    while (!(await leads(other))) {
      if (Date.now() - killedAt > 20_000) throw new Error('no failover within 20 s');
      await new Promise((r) => setTimeout(r, 50));
    }
    const failover = Date.now() - killedAt;
    // The lease runs out at most 15 s after the leader's last renewal (which came before the
    // kill); the rest is the new leader's write and this poll.
    expect(failover).toBeLessThanOrEqual(15_500);

    // And the new leader's controllers work.
    await t.cp.client().create(orphan('orphan-2'));
    await collected('orphan-2');
  } finally {
    polling = false;
    await poller;
  }
  expect(violations).toBe(0);
  expect(leaderLog.some((l) => l.length === 1)).toBe(true);
}, 90_000);

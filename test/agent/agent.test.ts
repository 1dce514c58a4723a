/**
 * A real agent reading this machine, joined to a fresh server over gRPC (TLS, its own node
 * credential), with the agent's time on a fake clock so minutes pass in milliseconds.
 */
import { readFileSync } from 'node:fs';
import { availableParallelism, release } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import type { Node, NodeCondition } from '../../client/api/types.js';
import { FakeClock } from '../../client/util/clock.js';
import { NodeAgent } from '../../agent/agent.js';
import { defaultConfig, parseEvictionHard } from '../../agent/config.js';
import { quietLogger } from '../../agent/logger.js';
import { LinuxMachineReader } from '../../agent/machine/linux.js';
import type { MachineReader } from '../../agent/machine/types.js';
import { joinedNode, startTestControlPlane } from '../support/controlplane.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(nodeName: string, reader?: (dataDir: string) => MachineReader) {
  const t = await startTestControlPlane();
  cleanups.push(() => t.close());
  const { client, dataDir } = await joinedNode(t, nodeName, cleanups);
  const clock = new FakeClock(Date.now());
  const config = defaultConfig(nodeName);
  const agent = new NodeAgent({
    client,
    reader: reader ? reader(dataDir) : new LinuxMachineReader({ dataDir }),
    config,
    logger: quietLogger(),
    clock,
  });
  cleanups.push(() => agent.stop());
  const admin = t.client();
  return { t, agent, clock, config, admin };
}

/** Moves the agent's clock, letting real I/O run in between. */
async function advance(clock: FakeClock, ms: number, stepMs = 1000): Promise<void> {
  for (let done = 0; done < ms; done += stepMs) {
    clock.advance(Math.min(stepMs, ms - done));
    await new Promise((r) => setTimeout(r, 2));
  }
}

/** Polls `get` until `ok`; with a clock, also lets the agent's time move on (100 ms a poll). */
async function eventually<T>(
  get: () => Promise<T>,
  ok: (v: T) => boolean,
  what: string,
  clock?: FakeClock,
): Promise<T> {
  for (let i = 0; i < 500; i++) {
    const v = await get().catch(() => undefined);
    if (v !== undefined && ok(v)) return v;
    clock?.advance(100);
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const condition = (n: Node, type: string): NodeCondition | undefined =>
  n.status?.conditions?.find((c) => c.type === type);

describe('a real agent on this machine', () => {
  it('registers the Node with real nodeInfo, capacity and conditions, Ready at once', async () => {
    const { agent, admin } = await setup('real-1');
    agent.start();
    const node = await eventually(
      () => admin.get('Node', 'real-1'),
      (n) => condition(n, 'Ready')?.status === 'True',
      'the node to be Ready',
    );
    const info = node.status!.nodeInfo!;
    expect(info.machineID).toBe(readFileSync('/etc/machine-id', 'utf8').trim());
    expect(info.bootID).toBe(readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim());
    expect(info.kernelVersion).toBe(release());
    expect(info.osImage).toMatch(/\S/);
    expect(info).toMatchObject({
      operatingSystem: 'linux',
      architecture: process.arch === 'x64' ? 'amd64' : process.arch,
      agentVersion: '0.1.0',
    });
    const memTotalKi = Number(/MemTotal:\s+(\d+)/.exec(readFileSync('/proc/meminfo', 'utf8'))![1]);
    expect(node.status?.capacity).toMatchObject({
      cpu: String(availableParallelism()),
      memory: `${memTotalKi}Ki`,
      pods: '110',
    });
    expect(node.status?.allocatable?.memory).toBe(`${memTotalKi - 100 * 1024}Ki`);
    expect(node.metadata?.labels).toMatchObject({
      'kubernetes.io/hostname': 'real-1',
      'kubernetes.io/os': 'linux',
    });
    expect(node.status?.addresses?.map((a) => a.type)).toContain('Hostname');
    for (const type of ['MemoryPressure', 'DiskPressure', 'PIDPressure']) {
      expect(condition(node, type)).toMatchObject({ status: 'False' });
    }
    expect(condition(node, 'Ready')).toMatchObject({
      reason: 'KubeletReady',
      message: 'kubelet is posting ready status',
    });
  });

  it('renews its lease every 10 s with a 40 s duration', async () => {
    const { agent, admin, clock } = await setup('real-2');
    agent.start();
    await eventually(
      () => admin.get('Lease', 'real-2', { namespace: 'kube-node-lease' }),
      () => true,
      'the lease',
      clock,
    );
    await eventually(
      async () => agent.lease.renewals,
      (n) => n >= 1,
      'the first renewal',
      clock,
    );
    const first = await admin.get('Lease', 'real-2', { namespace: 'kube-node-lease' });
    expect(first.spec).toMatchObject({ holderIdentity: 'real-2', leaseDurationSeconds: 40 });
    expect(first.metadata?.ownerReferences?.[0]).toMatchObject({ kind: 'Node', name: 'real-2' });
    const before = agent.lease.renewals;
    await advance(clock, 60_000);
    await eventually(
      async () => agent.lease.renewals,
      (n) => n >= before + 6,
      'six more renewals',
      clock,
    );
    expect(agent.lease.renewals - before).toBeLessThanOrEqual(7);
    const later = await admin.get('Lease', 'real-2', { namespace: 'kube-node-lease' });
    expect(Date.parse(later.spec!.renewTime!) - Date.parse(first.spec!.renewTime!)).toBeGreaterThanOrEqual(
      59_000,
    );
  });

  it('does not rewrite an unchanged status, but reports at least every 5 minutes', async () => {
    const { agent, admin, clock } = await setup('real-3');
    agent.start();
    await eventually(
      () => admin.get('Node', 'real-3'),
      (n) => condition(n, 'Ready')?.status === 'True',
      'Ready',
    );
    await eventually(
      async () => agent.status.writes,
      (w) => w >= 1,
      'the fast status update',
    );
    const writesAfterStart = agent.status.writes;
    const rv = (await admin.get('Node', 'real-3')).metadata?.resourceVersion;
    // 4 minutes of 10 s status rounds: nothing changed, nothing written.
    await advance(clock, 4 * 60_000, 2_000);
    expect(agent.status.writes).toBe(writesAfterStart);
    expect((await admin.get('Node', 'real-3')).metadata?.resourceVersion).toBe(rv);
    // Past 5 minutes since the last write: one write, with fresh heartbeat times.
    await advance(clock, 90_000, 2_000);
    await eventually(
      async () => agent.status.writes,
      (w) => w === writesAfterStart + 1,
      'the periodic report',
    );
    const node = await admin.get('Node', 'real-3');
    expect(Date.parse(condition(node, 'Ready')!.lastHeartbeatTime!)).toBeGreaterThan(
      Date.parse(condition(node, 'Ready')!.lastTransitionTime!),
    );
  });

  it('turns pressure conditions True above current usage, and False only after the transition period', async () => {
    const { agent, admin, clock } = await setup('real-4');
    // Thresholds no machine can satisfy: everything below 100% of capacity "is" pressure.
    agent.status.setEvictionThresholds(
      parseEvictionHard('memory.available<100%,nodefs.available<100%,pid.available<100%'),
    );
    agent.start();
    const pressured = await eventually(
      () => admin.get('Node', 'real-4'),
      (n) =>
        ['MemoryPressure', 'DiskPressure', 'PIDPressure'].every((t) => condition(n, t)?.status === 'True'),
      'all three pressure conditions',
    );
    expect(condition(pressured, 'MemoryPressure')).toMatchObject({ reason: 'KubeletHasInsufficientMemory' });
    expect(condition(pressured, 'DiskPressure')).toMatchObject({ reason: 'KubeletHasDiskPressure' });
    expect(condition(pressured, 'PIDPressure')).toMatchObject({ reason: 'KubeletHasInsufficientPID' });
    expect(condition(pressured, 'Ready')?.status).toBe('True');

    // The signals clear (thresholds far below usage), but the conditions hold for 5 minutes.
    agent.status.setEvictionThresholds(
      parseEvictionHard('memory.available<1Ki,nodefs.available<1Ki,pid.available<1'),
    );
    await advance(clock, 4 * 60_000, 5_000);
    expect(condition(await admin.get('Node', 'real-4'), 'MemoryPressure')?.status).toBe('True');
    await advance(clock, 70_000, 5_000);
    const relieved = await eventually(
      () => admin.get('Node', 'real-4'),
      (n) =>
        ['MemoryPressure', 'DiskPressure', 'PIDPressure'].every((t) => condition(n, t)?.status === 'False'),
      'the pressure to clear',
    );
    const mp = condition(relieved, 'MemoryPressure')!;
    expect(
      Date.parse(mp.lastTransitionTime!) -
        Date.parse(condition(pressured, 'MemoryPressure')!.lastTransitionTime!),
    ).toBeGreaterThanOrEqual(5 * 60_000 - 10_000);
    // The agent records the relief's events once it has its status write's answer, which may
    // come after the relieved Node is already readable: wait for them rather than list once.
    const wanted = [
      'NodeHasInsufficientMemory',
      'NodeHasSufficientMemory',
      'NodeHasDiskPressure',
      'NodeHasNoDiskPressure',
    ];
    await eventually(
      async () => {
        await agent.recorder.flush();
        return (await admin.list('Event')).items.map((e) => e.reason);
      },
      (reasons) => wanted.every((r) => reasons.includes(r)),
      `the events ${wanted.join(', ')}`,
    );
  });

  it('reports usage as NodeMetrics every 10 s', async () => {
    const { agent, admin, clock } = await setup('real-5');
    agent.start();
    await eventually(
      () => admin.get('Node', 'real-5'),
      () => true,
      'registration',
    );
    await advance(clock, 11_000);
    const m = await eventually(
      () => admin.get('NodeMetrics', 'real-5'),
      () => true,
      'metrics',
    );
    expect(Object.keys(m.usage ?? {})).toEqual(
      expect.arrayContaining([
        'cpu',
        'memory',
        'ephemeral-storage',
        'kubelab.io/load1',
        'kubelab.io/network-receive-bytes',
        'kubelab.io/processes',
      ]),
    );
    expect(m.window).toBe('10s');
  });
});

import { describe, expect, it } from 'vitest';
import { HollowMachineReader, ipFromIndex, unitHash } from './hollow.js';
import type { MachineSample } from './types.js';

const GiB = 1024 ** 3;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

async function samples(reader: HollowMachineReader, n: number): Promise<MachineSample[]> {
  const out: MachineSample[] = [];
  for (let i = 0; i < n; i++) out.push(await reader.sample());
  return out;
}

describe('HollowMachineReader', () => {
  it('describes a 4-core, 8 GiB, 100 GiB node named after itself', async () => {
    const info = await new HollowMachineReader({ name: 'hollow-3', index: 3 }).info();
    expect(info).toMatchObject({
      hostname: 'hollow-3',
      internalIPs: ['10.0.0.4'],
      operatingSystem: 'linux',
      architecture: 'amd64',
      cpuCores: 4,
      memoryTotalBytes: 8 * GiB,
      nodefsCapacityBytes: 100 * GiB,
    });
    expect(info.machineID).toMatch(/^[0-9a-f]{32}$/);
    expect(info.systemUUID).toMatch(UUID);
    expect(info.bootID).toMatch(UUID);
  });

  it('gives every name its own stable IDs', async () => {
    const a = await new HollowMachineReader({ name: 'a' }).info();
    const a2 = await new HollowMachineReader({ name: 'a', seed: 'other' }).info();
    const b = await new HollowMachineReader({ name: 'b' }).info();
    expect(a2).toEqual(a);
    for (const key of ['machineID', 'systemUUID', 'bootID'] as const) {
      expect(b[key]).not.toBe(a[key]);
    }
    expect(new Set([a.machineID, a.systemUUID.replace(/-/g, ''), a.bootID.replace(/-/g, '')]).size).toBe(3);
    expect(a.internalIPs[0]).toMatch(/^10\.\d+\.\d+\.\d+$/);
  });

  it('synthesises addresses from the index', () => {
    expect(ipFromIndex(0)).toBe('10.0.0.1');
    expect(ipFromIndex(254)).toBe('10.0.0.255');
    expect(ipFromIndex(255)).toBe('10.0.1.0');
    expect(ipFromIndex(70_000)).toBe('10.1.17.113');
    const ips = new Set(Array.from({ length: 1000 }, (_, i) => ipFromIndex(i)));
    expect(ips.size).toBe(1000);
  });

  it('repeats the same readings for the same seed, and differs for another', async () => {
    const now = () => 42;
    const one = await samples(new HollowMachineReader({ name: 'n1', now }), 20);
    const two = await samples(new HollowMachineReader({ name: 'n1', now }), 20);
    const other = await samples(new HollowMachineReader({ name: 'n2', now }), 20);
    expect(two).toEqual(one);
    expect(other).not.toEqual(one);
    expect(one[0].at).toBe(42);
    // ... and they wobble from one sample to the next.
    expect(new Set(one.map((s) => s.memoryAvailableBytes)).size).toBeGreaterThan(10);
    expect(new Set(one.map((s) => s.cpuUsageCores)).size).toBeGreaterThan(10);
  });

  it('stays plausible', async () => {
    for (const name of ['a', 'b', 'c', 'node-17']) {
      let last: MachineSample | undefined;
      for (const s of await samples(new HollowMachineReader({ name }), 200)) {
        expect(s.memoryTotalBytes).toBe(8 * GiB);
        expect(s.memoryAvailableBytes / s.memoryTotalBytes).toBeGreaterThan(0.35);
        expect(s.memoryAvailableBytes / s.memoryTotalBytes).toBeLessThan(0.65);
        expect(s.nodefsAvailableBytes / s.nodefsCapacityBytes).toBeGreaterThan(0.55);
        expect(s.nodefsAvailableBytes / s.nodefsCapacityBytes).toBeLessThan(0.85);
        expect(s.nodefsInodesFree!).toBeLessThanOrEqual(s.nodefsInodes!);
        expect(s.processes!).toBeGreaterThan(100);
        expect(s.processes!).toBeLessThan(s.processLimit!);
        expect(s.cpuUsageCores).toBeGreaterThanOrEqual(0);
        expect(s.cpuUsageCores).toBeLessThanOrEqual(4);
        expect(s.load1).toBeGreaterThanOrEqual(0);
        if (last) {
          expect(s.networkReceiveBytes).toBeGreaterThan(last.networkReceiveBytes);
          expect(s.networkTransmitBytes).toBeGreaterThan(last.networkTransmitBytes);
        }
        last = s;
      }
    }
  });

  it('takes overrides until they are dropped', async () => {
    const reader = new HollowMachineReader({ name: 'pressure', now: () => 7 });
    const base = await new HollowMachineReader({ name: 'pressure', now: () => 7 }).sample();

    reader.set({ memoryAvailableBytes: 50 * 1024 ** 2, processes: 32_000 });
    reader.set({ nodefsAvailableBytes: GiB });
    for (const s of await samples(reader, 3)) {
      expect(s.memoryAvailableBytes).toBe(50 * 1024 ** 2);
      expect(s.processes).toBe(32_000);
      expect(s.nodefsAvailableBytes).toBe(GiB);
      expect(s.memoryTotalBytes).toBe(8 * GiB);
    }

    reader.set({ memoryAvailableBytes: undefined });
    const released = await reader.sample();
    expect(released.memoryAvailableBytes).not.toBe(50 * 1024 ** 2);
    expect(released.memoryAvailableBytes).toBeGreaterThan(2 * GiB);
    expect(released.processes).toBe(32_000);

    reader.reset();
    const fresh = new HollowMachineReader({ name: 'pressure', now: () => 7 });
    await samples(fresh, 4);
    expect(await reader.sample()).toEqual(await fresh.sample());
    expect(base.processes).not.toBe(32_000);
  });

  it('follows info overrides in its samples', async () => {
    const reader = new HollowMachineReader({ name: 'big' });
    reader.setInfo({ memoryTotalBytes: 64 * GiB, nodefsCapacityBytes: 2048 * GiB, bootID: 'rebooted' });
    const info = await reader.info();
    expect(info.memoryTotalBytes).toBe(64 * GiB);
    expect(info.bootID).toBe('rebooted');
    expect(info.hostname).toBe('big');
    const s = await reader.sample();
    expect(s.memoryTotalBytes).toBe(64 * GiB);
    expect(s.memoryAvailableBytes).toBeGreaterThan(16 * GiB);
    expect(s.nodefsCapacityBytes).toBe(2048 * GiB);
    expect(s.nodefsAvailableBytes).toBeGreaterThan(1000 * GiB);

    reader.setInfo({ bootID: undefined });
    expect((await reader.info()).bootID).toBe((await new HollowMachineReader({ name: 'big' }).info()).bootID);
  });

  it('hands out copies', async () => {
    const reader = new HollowMachineReader({ name: 'copy', index: 1 });
    (await reader.info()).internalIPs.push('1.2.3.4');
    expect((await reader.info()).internalIPs).toEqual(['10.0.0.2']);
  });
});

describe('the hollow reader’s draws', () => {
  it('are the same for the same text and spread evenly over [0, 1) for near-identical texts', () => {
    expect(unitHash('cpu\0node-1\0-1')).toBe(unitHash('cpu\0node-1\0-1'));
    const deciles = new Array<number>(10).fill(0);
    for (let node = 0; node < 100; node++)
      for (let n = 0; n < 100; n++) {
        const u = unitHash(`cpu\0hollow-${node}\0${n}`);
        expect(u).toBeGreaterThanOrEqual(0);
        expect(u).toBeLessThan(1);
        deciles[Math.floor(u * 10)]++;
      }
    for (const count of deciles) expect(Math.abs(count - 1000)).toBeLessThan(150);
  });
});

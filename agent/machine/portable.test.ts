import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Systeminformation } from 'systeminformation';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { goArch, goOS } from './common.js';
import { PortableMachineReader, parseRegDword, pickMount } from './portable.js';
import { watchSpawns } from './spawn-watch.js';

describe('pickMount', () => {
  const m = (mount: string): Systeminformation.FsSizeData => ({
    fs: mount,
    type: 'x',
    size: 1,
    used: 0,
    available: 1,
    use: 0,
    mount,
    rw: true,
  });

  it('takes the longest mount that holds the directory, on path boundaries', () => {
    const mounts = [m('/'), m('/home'), m('/home/user/data'), m('/boot'), m('')];
    expect(pickMount(mounts, '/home/user/database')?.mount).toBe('/home');
    expect(pickMount(mounts, '/home/user/data')?.mount).toBe('/home/user/data');
    expect(pickMount(mounts, '/home/user/data/kubelab')?.mount).toBe('/home/user/data');
    expect(pickMount(mounts, '/var/lib/kubelab')?.mount).toBe('/');
    expect(pickMount([m('/home')], '/var')).toBeUndefined();
    expect(pickMount([m('/'), m('/System/Volumes/Data')], '/Users/me/kubelab')?.mount).toBe('/');
  });

  it('matches Windows drives whatever the case and separators', () => {
    const mounts = [m('C:'), m('D:'), m('D:\\mnt\\data')];
    expect(pickMount(mounts, 'D:\\kubelab\\data')?.mount).toBe('D:');
    expect(pickMount(mounts, 'c:\\ProgramData\\kubelab')?.mount).toBe('C:');
    expect(pickMount(mounts, 'd:/mnt/data/x')?.mount).toBe('D:\\mnt\\data');
    expect(pickMount(mounts, 'E:\\x')).toBeUndefined();
  });
});

describe('parseRegDword', () => {
  it('reads the value of a reg query answer', () => {
    const answer =
      '\r\nHKEY_LOCAL_MACHINE\\SYSTEM\\CurrentControlSet\\Control\\Session Manager\\Memory Management\\PrefetchParameters\r\n    BootId    REG_DWORD    0x1a3\r\n\r\n';
    expect(parseRegDword(answer)).toBe(419);
    expect(parseRegDword('ERROR: The system was unable to find the specified registry key or value.')).toBe(
      undefined,
    );
  });
});

describe('PortableMachineReader on this machine', () => {
  let tmp: string;
  beforeEach(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'kubelab-machine-'));
  });
  afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('reads sane facts', async () => {
    const info = await new PortableMachineReader({ dataDir: tmp }).info();
    const st = fs.statfsSync(tmp);
    expect(info).toMatchObject({
      hostname: os.hostname(),
      kernelVersion: os.release(),
      operatingSystem: goOS(),
      architecture: goArch(),
      cpuCores: os.availableParallelism(),
      memoryTotalBytes: os.totalmem(),
      nodefsCapacityBytes: st.blocks * st.bsize,
    });
    expect(info.osImage).not.toBe('');
    expect(info.bootID).not.toBe('');
    expect(typeof info.systemUUID).toBe('string');
    if (process.platform === 'linux') {
      expect(info.bootID).toBe(fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim());
      const machineID = fs.existsSync('/etc/machine-id') && fs.readFileSync('/etc/machine-id', 'utf8').trim();
      if (machineID) expect(info.machineID).toBe(machineID);
      expect(info.operatingSystem).toBe('linux');
    }
  });

  it('takes sane samples and reuses network counters between refreshes', async () => {
    const si = (await import('systeminformation')).default;
    const networkStats = vi.spyOn(si, 'networkStats');
    let clock = 1_700_000_000_000;
    const reader = new PortableMachineReader({ dataDir: tmp, now: () => clock });
    await reader.info();
    const deadline = Date.now() + 200;
    while (Date.now() < deadline); // burn CPU so that some time is busy
    const s = await reader.sample();
    const st = fs.statfsSync(tmp);
    expect(s.at).toBe(clock);
    expect(s.memoryTotalBytes).toBe(os.totalmem());
    expect(s.memoryAvailableBytes).toBeGreaterThan(0);
    expect(s.memoryAvailableBytes).toBeLessThanOrEqual(s.memoryTotalBytes);
    expect(s.nodefsCapacityBytes).toBe(st.blocks * st.bsize);
    expect(s.nodefsAvailableBytes).toBeGreaterThan(0);
    expect(s.nodefsAvailableBytes).toBeLessThanOrEqual(s.nodefsCapacityBytes);
    if (process.platform !== 'win32') expect(s.nodefsInodes).toBe(st.files);
    expect(s.processes).toBeUndefined();
    expect(s.processLimit).toBeUndefined();
    expect(s.cpuUsageCores).toBeGreaterThan(0);
    expect(s.cpuUsageCores).toBeLessThanOrEqual(os.cpus().length);
    expect(s.load1).toBeGreaterThanOrEqual(0);
    expect(s.networkReceiveBytes).toBeGreaterThanOrEqual(0);
    expect(s.networkTransmitBytes).toBeGreaterThanOrEqual(0);
    expect(networkStats).toHaveBeenCalledTimes(1);

    // Within the refresh interval: the same counters, and (Linux, where si.mem() reads
    // /proc/meminfo) no child process at all.
    const watch = watchSpawns();
    try {
      clock += 59_999;
      const again = await reader.sample();
      expect(again.networkReceiveBytes).toBe(s.networkReceiveBytes);
      expect(again.networkTransmitBytes).toBe(s.networkTransmitBytes);
      if (process.platform === 'linux') expect(watch.spawned).toEqual([]);
      expect(networkStats).toHaveBeenCalledTimes(1);
    } finally {
      watch.stop();
    }

    // Past it: a refresh starts in the background; the sample does not wait for it.
    clock += 1;
    await reader.sample();
    expect(networkStats).toHaveBeenCalledTimes(2);
    await reader.sample(); // and not again before another interval
    expect(networkStats).toHaveBeenCalledTimes(2);
    networkStats.mockRestore();
  });

  it('reads nodefs through si.fsSize() when asked: the same filesystem, no inode counts', async () => {
    const missing = path.join(tmp, 'not', 'yet');
    const viaFsSize = await new PortableMachineReader({ dataDir: missing, nodefs: 'fsSize' }).sample();
    const viaStatfs = await new PortableMachineReader({ dataDir: missing }).sample();
    expect(viaFsSize.nodefsCapacityBytes).toBe(viaStatfs.nodefsCapacityBytes);
    expect(viaFsSize.nodefsInodes).toBeUndefined();
    expect(viaFsSize.nodefsInodesFree).toBeUndefined();
    expect(fs.existsSync(path.join(tmp, 'not'))).toBe(false);
  });
});

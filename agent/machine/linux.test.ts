import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { goArch, internalIPs } from './common.js';
import {
  LinuxMachineReader,
  cpuUsageCores,
  parseLoadavg,
  parseMeminfo,
  parseNetDev,
  parseOsRelease,
  parseProcStat,
} from './linux.js';
import { watchSpawns } from './spawn-watch.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const MEMINFO = `MemTotal:        8000000 kB
MemFree:         1000000 kB
MemAvailable:    5000000 kB
Buffers:          100000 kB
HugePages_Total:       0
`;

// 4 CPUs. From STAT_1 to STAT_2: user +150, nice +10, system +90, idle +100, iowait +40,
// softirq +10, guest +100 (already inside user: not counted again). Busy 260 of 400 ticks.
const STAT_1 = `cpu  1000 100 500 8000 200 0 50 0 0 0
cpu0 250 25 125 2000 50 0 12 0 0 0
cpu1 250 25 125 2000 50 0 12 0 0 0
cpu2 250 25 125 2000 50 0 13 0 0 0
cpu3 250 25 125 2000 50 0 13 0 0 0
intr 123456 0 0
ctxt 987654
btime 1700000000
processes 4242
procs_running 3
procs_blocked 0
`;
const STAT_2 = STAT_1.replace(
  'cpu  1000 100 500 8000 200 0 50 0 0 0',
  'cpu  1150 110 590 8100 240 0 60 0 100 0',
);
const STAT_2_CORES = (260 / 400) * 4;

const NET_DEV = `Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo: 16279705296 2519008    0    0    0     0          0         0 16279705296 2519008    0    0    0     0       0          0
  eth0: 514137606   22225    0    0    0     0          0         0  1756556   14453    0    0    0     0       0          0
wlan0:1000 10 0 0 0 0 0 0 2000 20 0 0 0 0 0 0
`;

const OS_RELEASE = `# fixture
NAME="Test Linux"
VERSION="1.0"
PRETTY_NAME="Test Linux 1.0 (\\"fixture\\")"
ID=testlinux
`;

function write(root: string, rel: string, text: string): void {
  const p = path.join(root, rel);
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, text);
}

function fixture(root: string): void {
  write(root, 'proc/meminfo', MEMINFO);
  write(root, 'proc/loadavg', '0.52 0.58 0.59 3/1234 5678\n');
  write(root, 'proc/stat', STAT_1);
  write(root, 'proc/net/dev', NET_DEV);
  write(root, 'proc/sys/kernel/pid_max', '4194304\n');
  write(root, 'proc/sys/kernel/threads-max', '62869\n');
  write(root, 'proc/sys/kernel/random/boot_id', 'f3c4e1a2-0b1d-4c5e-9f00-123456789abc\n');
  write(root, 'etc/machine-id', '0123456789abcdef0123456789abcdef\n');
  write(root, 'etc/os-release', OS_RELEASE);
  write(root, 'sys/class/dmi/id/product_uuid', '4C4C4544-0042-3510-8051-B4C04F4E4B32\n');
}

describe('LinuxMachineReader on a fixture tree', () => {
  let tmp: string;
  let root: string;
  let dataDir: string;

  beforeEach(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'kubelab-machine-'));
    root = path.join(tmp, 'root');
    dataDir = path.join(tmp, 'data');
    fs.mkdirSync(dataDir);
    fixture(root);
  });
  afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('reads the facts', async () => {
    const hardwareUUID = vi.fn(async () => 'not-used');
    const reader = new LinuxMachineReader({ dataDir, root, hardwareUUID });
    const st = fs.statfsSync(dataDir);
    expect(await reader.info()).toEqual({
      hostname: os.hostname(),
      internalIPs: internalIPs(),
      machineID: '0123456789abcdef0123456789abcdef',
      systemUUID: '4C4C4544-0042-3510-8051-B4C04F4E4B32',
      bootID: 'f3c4e1a2-0b1d-4c5e-9f00-123456789abc',
      kernelVersion: os.release(),
      osImage: 'Test Linux 1.0 ("fixture")',
      operatingSystem: 'linux',
      architecture: goArch(),
      cpuCores: os.availableParallelism(),
      memoryTotalBytes: 8_000_000 * 1024,
      nodefsCapacityBytes: st.blocks * st.bsize,
    });
    expect(hardwareUUID).not.toHaveBeenCalled();
  });

  it('falls back to dbus machine-id, the hardware UUID source and /usr/lib/os-release', async () => {
    fs.rmSync(path.join(root, 'etc/machine-id'));
    fs.writeFileSync(path.join(root, 'etc/os-release'), ''); // present but empty
    write(root, 'var/lib/dbus/machine-id', 'fedcba9876543210fedcba9876543210\n');
    write(root, 'usr/lib/os-release', 'NAME=Other\nVERSION="2 (two)"\n');
    fs.rmSync(path.join(root, 'sys/class/dmi'), { recursive: true });
    const info = await new LinuxMachineReader({
      dataDir,
      root,
      hardwareUUID: async () => ' 11111111-2222-3333-4444-555555555555\n',
    }).info();
    expect(info.machineID).toBe('fedcba9876543210fedcba9876543210');
    expect(info.systemUUID).toBe('11111111-2222-3333-4444-555555555555');
    expect(info.osImage).toBe('Other 2 (two)');

    const failing = new LinuxMachineReader({
      dataDir,
      root,
      hardwareUUID: () => Promise.reject(new Error('no dmidecode')),
    });
    expect((await failing.info()).systemUUID).toBe('');
  });

  it('takes samples: /proc values, statfs, CPU from the /proc/stat delta since info()', async () => {
    let clock = 1_700_000_000_000;
    const reader = new LinuxMachineReader({ dataDir, root, now: () => clock, hardwareUUID: async () => '' });
    await reader.info(); // the CPU baseline: STAT_1
    write(root, 'proc/stat', STAT_2);
    clock += 10_000;
    const before = fs.statfsSync(dataDir);
    const s = await reader.sample();
    const after = fs.statfsSync(dataDir);

    const { nodefsAvailableBytes, nodefsInodesFree, cpuUsageCores, ...exact } = s;
    expect(exact).toEqual({
      at: 1_700_000_010_000,
      memoryAvailableBytes: 5_000_000 * 1024,
      memoryTotalBytes: 8_000_000 * 1024,
      nodefsCapacityBytes: before.blocks * before.bsize,
      nodefsInodes: before.files,
      processes: 1234,
      processLimit: 62869,
      load1: 0.52,
      load5: 0.58,
      load15: 0.59,
      networkReceiveBytes: 514137606 + 1000,
      networkTransmitBytes: 1756556 + 2000,
    });
    expect(cpuUsageCores).toBeCloseTo(STAT_2_CORES, 10);
    // Available space and free inodes move with whatever else writes to this disk.
    const slack = 256 * 1024 * 1024;
    const avail = [before.bavail * before.bsize, after.bavail * after.bsize];
    expect(nodefsAvailableBytes).toBeGreaterThanOrEqual(Math.min(...avail) - slack);
    expect(nodefsAvailableBytes).toBeLessThanOrEqual(Math.max(...avail) + slack);
    expect(Math.abs(nodefsInodesFree! - before.ffree)).toBeLessThan(100_000);

    // No tick since: the last figure stands and the baseline stays.
    expect((await reader.sample()).cpuUsageCores).toBeCloseTo(STAT_2_CORES, 10);
    // A fully idle interval after that.
    write(root, 'proc/stat', STAT_2.replace('cpu  1150 110 590 8100', 'cpu  1150 110 590 8500'));
    expect((await reader.sample()).cpuUsageCores).toBe(0);
  });

  it('reports 0 cores on a first sample without info(), then measures from it', async () => {
    const reader = new LinuxMachineReader({ dataDir, root });
    expect((await reader.sample()).cpuUsageCores).toBe(0);
    write(root, 'proc/stat', STAT_2);
    expect((await reader.sample()).cpuUsageCores).toBeCloseTo(STAT_2_CORES, 10);
  });

  it('uses the filesystem of the nearest existing ancestor and creates nothing', async () => {
    const missing = path.join(dataDir, 'not', 'yet');
    const reader = new LinuxMachineReader({ dataDir: missing, root, hardwareUUID: async () => '' });
    const st = fs.statfsSync(dataDir);
    expect((await reader.info()).nodefsCapacityBytes).toBe(st.blocks * st.bsize);
    expect((await reader.sample()).nodefsCapacityBytes).toBe(st.blocks * st.bsize);
    expect(fs.existsSync(path.join(dataDir, 'not'))).toBe(false);
  });

  it('leaves processLimit undefined without pid_max and threads-max, and takes the one there is', async () => {
    fs.rmSync(path.join(root, 'proc/sys/kernel/threads-max'));
    const reader = new LinuxMachineReader({ dataDir, root });
    expect((await reader.sample()).processLimit).toBe(4194304);
    fs.rmSync(path.join(root, 'proc/sys/kernel/pid_max'));
    expect((await reader.sample()).processLimit).toBeUndefined();
  });

  it('fails loudly when /proc/meminfo lacks MemAvailable', async () => {
    write(root, 'proc/meminfo', 'MemTotal: 1000 kB\n');
    await expect(new LinuxMachineReader({ dataDir, root }).sample()).rejects.toThrow(/MemAvailable/);
  });
});

describe('Linux parsers', () => {
  it('parses meminfo, loadavg and net/dev', () => {
    expect(parseMeminfo(MEMINFO).get('MemAvailable')).toBe(5_000_000);
    expect(parseMeminfo(MEMINFO).get('HugePages_Total')).toBe(0);
    expect(parseLoadavg('10.00 2.50 0.01 12/34567 89\n')).toEqual({
      load1: 10,
      load5: 2.5,
      load15: 0.01,
      processes: 34567,
    });
    expect(() => parseLoadavg('garbage')).toThrow();
    expect(parseNetDev(NET_DEV)).toEqual({ receiveBytes: 514138606, transmitBytes: 1758556 });
    expect(parseNetDev('')).toEqual({ receiveBytes: 0, transmitBytes: 0 });
  });

  it('counts busy ticks without idle, iowait or guest', () => {
    const a = parseProcStat(STAT_1);
    expect(a).toEqual({ busy: 1000 + 100 + 500 + 0 + 50 + 0, total: 1650 + 8000 + 200, cpus: 4 });
    expect(cpuUsageCores(a, parseProcStat(STAT_2))).toBeCloseTo(2.6, 10);
    expect(cpuUsageCores(a, a)).toBeUndefined();
    // Old kernels write only four columns.
    expect(parseProcStat('cpu  10 0 10 80\ncpu0 10 0 10 80\n')).toEqual({ busy: 20, total: 100, cpus: 1 });
  });

  it('parses os-release quoting', () => {
    expect(
      parseOsRelease(`A="x y"\nB='it''s'\nC=plain\nD="a \\"q\\" \\$HOME \\\\"\n#E=no\nbad line\n`),
    ).toEqual({ A: 'x y', B: "it''s", C: 'plain', D: 'a "q" $HOME \\' });
  });
});

describe.runIf(process.platform === 'linux')('LinuxMachineReader on this machine', () => {
  let tmp: string;
  beforeEach(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'kubelab-machine-'));
  });
  afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('reads sane facts', async () => {
    const info = await new LinuxMachineReader({ dataDir: tmp }).info();
    expect(info.bootID).toMatch(UUID);
    expect(info.bootID).toBe(fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim());
    if (fs.existsSync('/etc/machine-id') && fs.readFileSync('/etc/machine-id', 'utf8').trim()) {
      expect(info.machineID).toBe(fs.readFileSync('/etc/machine-id', 'utf8').trim());
    }
    expect(info.memoryTotalBytes).toBe(os.totalmem());
    expect(info.nodefsCapacityBytes).toBeGreaterThan(0);
    expect(info.osImage).not.toBe('');
    expect(info.cpuCores).toBeGreaterThanOrEqual(1);
  });

  it('takes sane samples', async () => {
    const reader = new LinuxMachineReader({ dataDir: tmp });
    await reader.info();
    const deadline = Date.now() + 200;
    while (Date.now() < deadline); // burn CPU so that some ticks are busy
    const s = await reader.sample();
    expect(s.memoryAvailableBytes).toBeGreaterThan(0);
    expect(s.memoryAvailableBytes).toBeLessThanOrEqual(s.memoryTotalBytes);
    expect(s.memoryTotalBytes).toBe(os.totalmem());
    expect(s.processes).toBeGreaterThan(0);
    expect(s.processLimit).toBeGreaterThanOrEqual(s.processes!);
    expect(s.nodefsAvailableBytes).toBeGreaterThan(0);
    expect(s.nodefsAvailableBytes).toBeLessThanOrEqual(s.nodefsCapacityBytes);
    if (s.nodefsInodes !== undefined) expect(s.nodefsInodesFree).toBeLessThanOrEqual(s.nodefsInodes);
    const cpus = fs.readFileSync('/proc/stat', 'utf8').match(/^cpu\d+ /gm)!.length;
    expect(s.cpuUsageCores).toBeGreaterThan(0);
    expect(s.cpuUsageCores).toBeLessThanOrEqual(cpus);
    for (const load of [s.load1, s.load5, s.load15]) expect(load).toBeGreaterThanOrEqual(0);
    expect(s.networkReceiveBytes).toBeGreaterThanOrEqual(0);
    expect(s.networkTransmitBytes).toBeGreaterThanOrEqual(0);
    expect(Math.abs(s.at - Date.now())).toBeLessThan(60_000);
  });

  it('starts no child process while sampling', async () => {
    const reader = new LinuxMachineReader({ dataDir: tmp });
    await reader.info(); // may run dmidecode for the hardware UUID: allowed once
    const watch = watchSpawns();
    try {
      for (let i = 0; i < 20; i++) await reader.sample();
      expect(watch.spawned).toEqual([]);
    } finally {
      watch.stop();
    }
  });

  it('(the spawn watch sees synchronous and asynchronous children)', async () => {
    const watch = watchSpawns();
    try {
      execFileSync('true');
      await new Promise((resolve, reject) => execFile('true', (err) => (err ? reject(err) : resolve(null))));
      expect([...watch.spawned].sort()).toEqual(['execFileSync true', 'spawn true']);
    } finally {
      watch.stop();
    }
  });
});

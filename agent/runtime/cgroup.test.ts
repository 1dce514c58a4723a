import { mkdtempSync, readdirSync, readFileSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Cgroups, cpuMax, memoryMax, oomKills } from './cgroup.js';

let dir: string;

beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'kubelab-cgroup-'));
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** A logger whose records the test can read. */
function recordingLogger() {
  const lines: Array<{ level: number; msg: string; reason?: string }> = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => lines.push(JSON.parse(line)) });
  return { logger, lines };
}

describe('Cgroups', () => {
  it('does not enforce limits, and says so once, where the root is not a cgroup v2 mount', async () => {
    const { logger, lines } = recordingLogger();
    const cgroups = new Cgroups({ logger, root: dir });
    expect(await cgroups.unavailableReason()).toMatch(/is not a cgroup v2 mount/);
    expect(await cgroups.prepare('pod-1', 'app', { milliCPU: 500 })).toBeUndefined();
    expect(await cgroups.prepare('pod-1', 'web', { memoryBytes: 1 << 20 })).toBeUndefined();
    const warnings = lines.filter((l) => l.msg.includes('not enforced'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0].reason).toMatch(/not a cgroup v2 mount/);
    expect(readdirSync(dir)).toEqual([]); // nothing created
  });

  it('needs no cgroup for a container without limits', async () => {
    const { logger, lines } = recordingLogger();
    const cgroups = new Cgroups({ logger, root: dir });
    expect(await cgroups.prepare('pod-1', 'app', undefined)).toBeUndefined();
    expect(await cgroups.prepare('pod-1', 'app', {})).toBeUndefined();
    expect(lines).toEqual([]);
  });

  it('on this machine (no cgroup v2 at /sys/fs/cgroup): takes the "not enforced" path', async () => {
    const CGROUP2_SUPER_MAGIC = 0x63677270;
    let type: number;
    try {
      type = statfsSync('/sys/fs/cgroup').type;
    } catch {
      return; // no /sys/fs/cgroup at all (macOS)
    }
    if (type === CGROUP2_SUPER_MAGIC) return; // a cgroup v2 host: the outcome depends on delegation
    const { logger } = recordingLogger();
    expect(await new Cgroups({ logger }).unavailableReason()).toMatch(
      /\/sys\/fs\/cgroup is not a cgroup v2 mount/,
    );
  });

  it('refuses a cgroup v2 mount without the cpu and memory controllers, before creating anything', async () => {
    const mount = cgroup2Mount();
    if (!mount) return;
    const available = readFileSync(path.join(mount, 'cgroup.controllers'), 'utf8');
    if (available.includes('cpu') && available.includes('memory')) return; // a real, complete one
    const { logger } = recordingLogger();
    const reason = await new Cgroups({ logger, root: mount }).unavailableReason();
    expect(reason).toMatch(/controller.* not available/);
    expect(readdirSync(mount)).not.toContain('kubelab');
  });
});

describe('limit values', () => {
  it('cpu.max: quota per 100 ms period, at least 1 ms', () => {
    expect(cpuMax(undefined)).toBe('max 100000');
    expect(cpuMax(500)).toBe('50000 100000');
    expect(cpuMax(2000)).toBe('200000 100000');
    expect(cpuMax(1)).toBe('1000 100000');
  });

  it('memory.max in bytes', () => {
    expect(memoryMax(undefined)).toBe('max');
    expect(memoryMax(64 * 1024 * 1024)).toBe('67108864');
  });

  it('counts OOM kills from memory.events (0 where there is none)', async () => {
    expect(await oomKills(dir)).toBe(0);
    writeFileSync(path.join(dir, 'memory.events'), 'low 0\nhigh 0\nmax 4\noom 2\noom_kill 2\n');
    expect(await oomKills(dir)).toBe(2);
  });
});

function cgroup2Mount(): string | undefined {
  try {
    for (const line of readFileSync('/proc/self/mountinfo', 'utf8').split('\n')) {
      const [left, right] = line.split(' - ');
      if (right?.startsWith('cgroup2 ')) return left.split(' ')[4];
    }
  } catch {
    return undefined;
  }
  return undefined;
}

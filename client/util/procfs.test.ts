import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { isSameProcess, parseProcStat, processInfo, processInfoFromPs, processStartTime } from './procfs.js';

/** A /proc/<pid>/stat line: 52 fields, field 22 (starttime) = `startTime`. */
function statLine(comm: string, state: string, startTime: string): string {
  const rest = Array.from({ length: 52 - 3 }, (_, i) => String(i + 4));
  rest[22 - 4] = startTime;
  return `4242 (${comm}) ${state} ${rest.join(' ')}\n`;
}

function exitOf(child: ReturnType<typeof spawn>): Promise<void> {
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

describe('parseProcStat', () => {
  it('counts fields from the last ")" so a comm with spaces and parentheses parses', () => {
    expect(parseProcStat(statLine('a) b (c)) S 9', 'S', '987654'))).toEqual({
      startTime: '987654',
      zombie: false,
    });
    expect(parseProcStat(statLine('sd-pam', 'Z', '12'))).toEqual({ startTime: '12', zombie: true });
  });

  it('rejects what is not a stat line', () => {
    expect(parseProcStat('')).toBeUndefined();
    expect(parseProcStat('1 (x) S 1 2')).toBeUndefined();
  });
});

describe('processStartTime / isSameProcess', () => {
  it('reads field 22 of /proc/<pid>/stat for this process', () => {
    const own = readFileSync('/proc/self/stat', 'utf8');
    const expected = own.slice(own.lastIndexOf(')') + 2).split(' ')[19];
    expect(processStartTime(process.pid)).toBe(expected);
  });

  it('is true for a live process with its start time, false for another start time or once it is gone', async () => {
    const child = spawn('sleep', ['5'], { stdio: 'ignore' });
    const pid = child.pid as number;
    const startTime = processStartTime(pid);
    expect(startTime).toMatch(/^\d+$/);
    expect(isSameProcess(pid, startTime as string)).toBe(true);
    // A reused pid shows up as the same pid with another start time.
    expect(isSameProcess(pid, String(Number(startTime) + 1))).toBe(false);
    const exited = exitOf(child);
    child.kill('SIGKILL');
    await exited;
    expect(processStartTime(pid)).toBeUndefined();
    expect(isSameProcess(pid, startTime as string)).toBe(false);
  });

  it('treats a zombie (exited, not reaped) as gone', async () => {
    // `sleep 0` is forked by sh, which then becomes `sleep 3`: nobody reaps the first sleep.
    const child = spawn('sh', ['-c', 'sleep 0 & echo $!; exec sleep 3'], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const zombiePid = Number(
      await new Promise<string>((resolve) =>
        child.stdout?.once('data', (d: Buffer) => resolve(d.toString())),
      ),
    );
    try {
      let info = processInfo(zombiePid);
      for (let i = 0; i < 50 && !info?.zombie; i++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        info = processInfo(zombiePid);
      }
      expect(info?.zombie).toBe(true);
      expect(isSameProcess(zombiePid, info?.startTime as string)).toBe(false);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('rejects pids that cannot be a process', () => {
    expect(processInfo(0)).toBeUndefined();
    expect(processInfo(-1)).toBeUndefined();
    expect(processInfo(1.5)).toBeUndefined();
  });

  it('falls back to ps where there is no /proc', () => {
    const hasPs = spawnSync('ps', ['-p', '1'], { stdio: 'ignore' }).status === 0;
    if (!hasPs) return;
    const info = processInfoFromPs(process.pid);
    expect(info?.zombie).toBe(false);
    expect(info?.startTime).toMatch(/\d{2}:\d{2}:\d{2}/);
    expect(processInfoFromPs(2 ** 30)).toBeUndefined();
  });
});

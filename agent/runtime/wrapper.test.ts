import { spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  closeSync,
  readFileSync,
  rmSync,
  rmdirSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseExitFile, statusFromCode, statusFromSignal, wrapperInvocation } from './wrapper.js';

let dir: string;

beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'kubelab-wrapper-'));
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

interface Run {
  pid: number;
  /** The wrapper's own exit: code, or signal. */
  ended: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  log: () => string;
  exitFile: string;
}

/** Starts `argv` under the wrapper as the runtime does: detached, stdout+stderr to one log file. */
function run(argv: string[], opts: { cgroupProcs?: string; env?: Record<string, string> } = {}): Run {
  const exitFile = path.join(dir, 'exit');
  const logFile = path.join(dir, 'log');
  const fd = openSync(logFile, 'a');
  const startedFile = path.join(dir, 'started');
  const { file, args } = wrapperInvocation({ argv, exitFile, startedFile, cgroupProcs: opts.cgroupProcs });
  const child = spawn(file, args, {
    detached: true,
    stdio: ['ignore', fd, fd],
    cwd: dir,
    env: opts.env ?? { PATH: process.env.PATH ?? '/usr/bin:/bin' },
  });
  closeSync(fd);
  const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return { pid: child.pid as number, ended, log: () => readFileSync(logFile, 'utf8'), exitFile };
}

async function waitFor(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (check()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('the wrapper', () => {
  it('passes the exit code through and records it in the exit file', async () => {
    const r = run(['sh', '-c', 'echo out; echo err >&2; exit 3']);
    expect(await r.ended).toEqual({ code: 3, signal: null });
    expect(readFileSync(r.exitFile, 'utf8')).toBe('3\n');
    expect(existsSync(`${r.exitFile}.tmp`)).toBe(false);
    expect(r.log()).toBe('out\nerr\n');
  });

  it('creates the started file before it runs the command', async () => {
    const r = run(['sh', '-c', `test -e ${path.join(dir, 'started')} && echo was there`]);
    expect((await r.ended).code).toBe(0);
    expect(r.log()).toBe('was there\n');
  });

  it('hands the argv over verbatim: nothing is re-parsed by the shell', async () => {
    const marker = path.join(dir, 'pwned');
    const tricky = ['two words', '"quoted"', "it's", `$(touch ${marker})`, '`id`', '; exit 9', '*', '', '-n'];
    const r = run(['printf', '[%s]\\n', ...tricky]);
    expect((await r.ended).code).toBe(0);
    expect(r.log()).toBe(tricky.map((a) => `[${a}]\n`).join(''));
    expect(existsSync(marker)).toBe(false);
  });

  it('runs programs, never shell builtins', async () => {
    // As a builtin, `exit 4` would end the wrapper itself without an exit file.
    const r = run(['exit', '4']);
    expect((await r.ended).code).toBe(127);
    expect(readFileSync(r.exitFile, 'utf8')).toBe('127\n');
  });

  it('leaves the container its default signal dispositions', async () => {
    const r = run(['cat', '/proc/self/status']);
    await r.ended;
    // An `&` child of sh would show SIGINT and SIGQUIT ignored (SigIgn 0000000000000006).
    expect(r.log()).toMatch(/^SigIgn:\t0{16}$/m);
    expect(r.log()).toMatch(/^SigBlk:\t0{16}$/m);
  });

  it('delivers SIGTERM to the group once: the container handles it, the wrapper records its exit', async () => {
    const r = run([
      'sh',
      '-c',
      'trap "echo got TERM; exit 0" TERM; echo ready; while :; do sleep 0.05; done',
    ]);
    await waitFor(() => r.log().includes('ready'), 'the container to start');
    process.kill(-r.pid, 'SIGTERM');
    expect(await r.ended).toEqual({ code: 0, signal: null });
    // Once: the wrapper does not forward what the group already got. (The container's sh may
    // also report "Terminated" for its own `sleep`, which got the TERM too.)
    expect(r.log().match(/got TERM/g)).toHaveLength(1);
    expect(readFileSync(r.exitFile, 'utf8')).toBe('0\n');
  });

  it('records 128+signal for a container ended by a signal, without a "Terminated" line in its log', async () => {
    const r = run(['sh', '-c', 'echo ready; exec sleep 30']);
    await waitFor(() => r.log().includes('ready'), 'the container to start');
    process.kill(-r.pid, 'SIGTERM');
    expect((await r.ended).code).toBe(143);
    expect(parseExitFile(readFileSync(r.exitFile, 'utf8'))).toEqual({ exitCode: 143, signal: 'SIGTERM' });
    expect(r.log()).toBe('ready\n');
  });

  it('leaves no exit file when the container and the wrapper are SIGKILLed', async () => {
    const r = run(['sh', '-c', 'trap "" TERM; echo ready; exec sleep 30']);
    await waitFor(() => r.log().includes('ready'), 'the container to start');
    process.kill(-r.pid, 'SIGKILL');
    expect(await r.ended).toEqual({ code: null, signal: 'SIGKILL' });
    expect(existsSync(r.exitFile)).toBe(false);
  });

  it('ends with 127 for a command that is not found and 126 for one that cannot be executed', async () => {
    const missing = run(['no-such-command-kubelab']);
    expect((await missing.ended).code).toBe(127);
    expect(missing.log()).toContain('no-such-command-kubelab: not found');
    const script = path.join(dir, 'script.sh');
    writeFileSync(script, 'echo never\n', { mode: 0o644 });
    const notExecutable = run([script]);
    expect((await notExecutable.ended).code).toBe(126);
  });

  it('runs the container anyway, saying so in its log, when it cannot join its cgroup', async () => {
    const r = run(['echo', 'hello'], { cgroupProcs: path.join(dir, 'no-such-cgroup', 'cgroup.procs') });
    expect((await r.ended).code).toBe(0);
    expect(r.log()).toContain('could not join cgroup');
    expect(r.log()).toContain('hello\n');
  });

  it('joins the cgroup it is given before starting the container (where a cgroup v2 mount is writable)', async () => {
    const mount = cgroup2Mount();
    if (!mount) return;
    const cgroup = path.join(mount, `kubelab-wrapper-test-${process.pid}`);
    try {
      mkdirSync(cgroup);
    } catch {
      return; // not writable here: nothing to test
    }
    try {
      const r = run(['cat', '/proc/self/cgroup'], { cgroupProcs: path.join(cgroup, 'cgroup.procs') });
      expect((await r.ended).code).toBe(0);
      expect(r.log()).toMatch(new RegExp(`^0::.*/kubelab-wrapper-test-${process.pid}$`, 'm'));
    } finally {
      await waitFor(() => {
        try {
          rmdirSync(cgroup);
          return true;
        } catch {
          return false;
        }
      }, 'the test cgroup to empty');
    }
  });
});

describe('wrapperInvocation', () => {
  it('passes argv as positional arguments after the exit file and the cgroup', () => {
    const { file, args } = wrapperInvocation({
      argv: ['a b', '$x'],
      exitFile: '/d/0.exit',
      startedFile: '/d/0.started',
    });
    expect(file).toBe('/bin/sh');
    expect(args.slice(2)).toEqual(['kubelab-wrapper', '/d/0.exit', '/d/0.started', '', 'a b', '$x']);
  });

  it('refuses an empty argv and a relative exit file', () => {
    expect(() => wrapperInvocation({ argv: [], exitFile: '/x', startedFile: '/y' })).toThrow(/argv is empty/);
    expect(() => wrapperInvocation({ argv: ['true'], exitFile: 'x', startedFile: '/y' })).toThrow(/absolute/);
    expect(() => wrapperInvocation({ argv: ['true'], exitFile: '/x', startedFile: 'y' })).toThrow(/absolute/);
  });
});

describe('exit statuses', () => {
  it('follow the shell convention', () => {
    expect(statusFromCode(0)).toEqual({ exitCode: 0 });
    expect(statusFromCode(3)).toEqual({ exitCode: 3 });
    expect(statusFromCode(128)).toEqual({ exitCode: 128 });
    expect(statusFromCode(137)).toEqual({ exitCode: 137, signal: 'SIGKILL' });
    expect(statusFromCode(143)).toEqual({ exitCode: 143, signal: 'SIGTERM' });
    expect(statusFromSignal('SIGKILL')).toEqual({ exitCode: 137, signal: 'SIGKILL' });
    expect(statusFromSignal('SIGINT')).toEqual({ exitCode: 130, signal: 'SIGINT' });
  });

  it('parse the exit file strictly', () => {
    expect(parseExitFile('130\n')).toEqual({ exitCode: 130, signal: 'SIGINT' });
    expect(parseExitFile('')).toBeUndefined();
    expect(parseExitFile('abc')).toBeUndefined();
  });
});

/** A cgroup v2 mount point, from /proc/self/mountinfo (undefined where there is none). */
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

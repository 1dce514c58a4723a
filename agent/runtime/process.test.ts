import { spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock, realClock, type Clock } from '../../client/util/clock.js';
import { quietLogger, type Logger } from '../logger.js';
import { LogStore } from './logs.js';
import { containerEnv, ProcessRuntime, type InstanceState } from './process.js';
import { isSameProcess, processInfo, processStartTime } from '../../client/util/procfs.js';
import type { ContainerSpec, RunningContainer } from './types.js';
import { wrapperInvocation } from './wrapper.js';

const POD = 'pod-uid-1';
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

let dataDir: string;
let cleanup: Array<() => void | Promise<void>>;

beforeEach(() => {
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'kubelab-process-'));
  cleanup = [];
});

afterEach(async () => {
  for (const fn of cleanup.reverse()) await fn();
  rmSync(dataDir, { recursive: true, force: true });
});

interface Agent {
  runtime: ProcessRuntime;
  logs: LogStore;
}

/** One "agent": a runtime and its log store on the shared data directory. */
function agent(opts: { clock?: Clock; logger?: Logger; agentUid?: number } = {}): Agent {
  const logs = new LogStore({ dataDir, clock: realClock, pollMs: 50 });
  const runtime = new ProcessRuntime({
    dataDir,
    ...(opts.agentUid !== undefined ? { agentUid: opts.agentUid } : {}),
    logs,
    clock: opts.clock ?? realClock,
    logger: opts.logger ?? quietLogger(),
    recoverPollMs: 50,
  });
  cleanup.push(() => {
    runtime.close();
    logs.close();
  });
  return { runtime, logs };
}

function spec(name: string, argv: string[], extra: Partial<ContainerSpec> = {}): ContainerSpec {
  return { podUid: POD, podKey: 'default/web', name, restartCount: 0, argv, env: {}, ...extra };
}

/** Kills the container's group at the end of a test, whatever happened. */
function killAtEnd(pid: number): void {
  cleanup.push(() => {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // already gone
    }
  });
}

async function start(a: Agent, s: ContainerSpec): Promise<RunningContainer> {
  const container = await a.runtime.start(s);
  killAtEnd(container.pid);
  return container;
}

function logFile(name: string, restartCount = 0): string {
  return path.join(dataDir, 'pods', POD, name, `${restartCount}.log`);
}

function logOf(name: string, restartCount = 0): string {
  try {
    return readFileSync(logFile(name, restartCount), 'utf8');
  } catch {
    return '';
  }
}

async function readLogs(logs: LogStore, container: string, previous = false): Promise<string> {
  const chunks: Buffer[] = [];
  await logs.stream(
    { podUid: POD, container, previous },
    (chunk) => chunks.push(chunk) > 0,
    new AbortController().signal,
  );
  return Buffer.concat(chunks).toString();
}

async function until(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function stateOf(name: string, restartCount = 0): InstanceState {
  return JSON.parse(
    readFileSync(path.join(dataDir, 'pods', POD, name, `${restartCount}.json`), 'utf8'),
  ) as InstanceState;
}

/** A logger whose records the test can read. */
function recordingLogger(): { logger: Logger; lines: Array<{ msg: string; reason?: string }> } {
  const lines: Array<{ msg: string; reason?: string }> = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
  return { logger, lines };
}

describe('ProcessRuntime.start', () => {
  it('runs the process with stdout and stderr in its log, and reports a clean exit as Completed', async () => {
    const a = agent();
    const c = await start(a, spec('app', ['sh', '-c', 'echo hello; echo oops >&2']));
    expect(c.id).toBe(`${POD}/app/0`);
    const exit = await c.exited;
    expect(exit).toMatchObject({ exitCode: 0, reason: 'Completed' });
    expect(exit.signal).toBeUndefined();
    expect(await readLogs(a.logs, 'app')).toBe('hello\noops\n');
  });

  it('ends a log follower once the container ended and its last lines were sent', async () => {
    const a = agent();
    const c = await start(a, spec('app', ['sh', '-c', 'echo one; sleep 0.3; printf two']));
    const chunks: Buffer[] = [];
    await a.logs.stream(
      { podUid: POD, container: 'app', follow: true },
      (chunk) => chunks.push(chunk) > 0,
      new AbortController().signal,
    );
    expect(Buffer.concat(chunks).toString()).toBe('one\ntwo');
    expect((await c.exited).reason).toBe('Completed');
  });

  it('reports exit code 3 as Error, and records it for later', async () => {
    const a = agent();
    const c = await start(a, spec('app', ['sh', '-c', 'exit 3']));
    const exit = await c.exited;
    expect(exit).toMatchObject({ exitCode: 3, reason: 'Error' });
    expect(stateOf('app')).toMatchObject({ pid: c.pid, argv: ['sh', '-c', 'exit 3'], exit: { exitCode: 3 } });
    expect(await a.runtime.lastExit(POD, 'app')).toEqual({ restartCount: 0, exit });
    expect(await a.runtime.stop(c, 1000)).toEqual(exit); // stopping an ended container: its exit
  });

  it('records pid, procfs start time, start and argv in <n>.json', async () => {
    const a = agent();
    const c = await start(a, spec('app', ['sleep', '30']));
    const state = stateOf('app');
    expect(state).toMatchObject({ pid: c.pid, startedAt: c.startedAt, argv: ['sleep', '30'] });
    expect(state.startTime).toBe(processStartTime(c.pid));
    expect(state.exit).toBeUndefined();
    await a.runtime.stop(c, 0);
  });

  it('gives the process the spec env plus PATH and HOME, nothing else of the agent', async () => {
    process.env.KUBELAB_TEST_SECRET = 'must not leak';
    cleanup.push(() => {
      delete process.env.KUBELAB_TEST_SECRET;
    });
    const a = agent();
    const c = await start(a, spec('app', ['env'], { env: { GREETING: 'hi there' } }));
    await c.exited;
    const vars = logOf('app').trim().split('\n').sort();
    // PWD: set by the wrapper's sh to the working directory (as any shell does).
    expect(vars).toEqual(
      [`GREETING=hi there`, `HOME=${process.env.HOME}`, `PATH=${process.env.PATH}`, 'PWD=/'].filter(
        (v) => !v.endsWith('=undefined'),
      ),
    );
    expect(containerEnv({ PATH: '/opt/bin' }, { PATH: '/usr/bin', HOME: '/root' })).toEqual({
      PATH: '/opt/bin',
      HOME: '/root',
    });
    expect(containerEnv({}, {})).toMatchObject({ PATH: expect.stringContaining('/usr/bin') });
  });

  it('runs in workingDir, and refuses one that does not exist before starting anything', async () => {
    const a = agent();
    const work = path.join(dataDir, 'work');
    mkdirSync(work);
    const c = await start(a, spec('app', ['pwd'], { workingDir: work }));
    await c.exited;
    expect(logOf('app')).toBe(`${work}\n`);
    await expect(
      a.runtime.start(spec('missing', ['pwd'], { workingDir: '/nonexistent/kubelab' })),
    ).rejects.toThrow(
      /workingDir \/nonexistent\/kubelab of container "missing" of pod default\/web does not exist on this node: create it/,
    );
    await expect(a.runtime.start(spec('relative', ['pwd'], { workingDir: 'work' }))).rejects.toThrow(
      /must be an absolute path/,
    );
    expect(existsSync(logFile('missing'))).toBe(false);
  });

  it.runIf(process.getuid?.() === 0)(
    'bind-mounts volumes where the container alone sees them, read-only when asked, running a command from one',
    async () => {
      const a = agent();
      const vol = path.join(dataDir, 'vol');
      mkdirSync(vol);
      writeFileSync(
        path.join(vol, 'run.sh'),
        '#!/bin/sh\ncat "$(dirname "$0")/data"; touch "$(dirname "$0")/new" 2>&1 || echo read-only\n',
        {
          mode: 0o755,
        },
      );
      writeFileSync(path.join(vol, 'data'), 'from the volume\n');
      const target = path.join(dataDir, 'mnt', 'app');
      const c = await start(
        a,
        spec('app', [`${target}/run.sh`], { mounts: [{ source: vol, target, readOnly: true }] }),
      );
      expect(await c.exited).toMatchObject({ exitCode: 0 });
      expect(logOf('app')).toMatch(/^from the volume\n.*Read-only file system\nread-only\n$/s);
      // The machine sees the mount point it made, empty.
      expect(readdirSync(target)).toEqual([]);
    },
  );

  it('refuses volumes for a process when the agent is not root, saying what to do', async () => {
    const a = agent({ agentUid: 1000 });
    await expect(
      a.runtime.start(
        spec('app', ['true'], { mounts: [{ source: dataDir, target: '/etc/app', readOnly: true }] }),
      ),
    ).rejects.toThrow(/needs kubelab-agent to run as root .* or run the container from an image/);
  });

  it('ends a command that cannot be found with 127, StartError and what to do', async () => {
    const a = agent();
    const c = await start(a, spec('app', ['kubelab-no-such-program', '--flag']));
    expect(c.startError).toMatch(/"kubelab-no-such-program" was not found in PATH/);
    const exit = await c.exited;
    expect(exit).toMatchObject({ exitCode: 127, reason: 'StartError' });
    expect(exit.message).toMatch(/"kubelab-no-such-program" was not found in PATH .*install it on the node/);
    expect(logOf('app')).toContain('kubelab-no-such-program: not found');
  });

  it('ends a file that cannot be executed with 126 and StartError', async () => {
    const a = agent();
    const script = path.join(dataDir, 'script.sh');
    writeFileSync(script, 'echo hi\n', { mode: 0o644 });
    const exit = await (await start(a, spec('app', [script]))).exited;
    expect(exit).toMatchObject({ exitCode: 126, reason: 'StartError' });
    expect(exit.message).toMatch(/not executable.*chmod \+x/);
  });

  it('says limits are not enforced (once) where cgroup v2 is not available, and runs the container', async () => {
    const { logger, lines } = recordingLogger();
    const logs = new LogStore({ dataDir, pollMs: 50 });
    const runtime = new ProcessRuntime({ dataDir, logs, logger, cgroupRoot: dataDir });
    cleanup.push(() => logs.close());
    const limits = { milliCPU: 250, memoryBytes: 64 << 20 };
    const first = await runtime.start(spec('a', ['true'], { limits }));
    const second = await runtime.start(spec('b', ['true'], { limits }));
    expect((await first.exited).reason).toBe('Completed');
    expect((await second.exited).reason).toBe('Completed');
    const warnings = lines.filter((l) => l.msg.includes('limits are not enforced'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0].reason).toMatch(/not a cgroup v2 mount/);
  });

  it('kills what the container left running in its process group when its main process ends', async () => {
    const a = agent();
    const pidFile = path.join(dataDir, 'bg.pid');
    const c = await start(a, spec('app', ['sh', '-c', `sleep 30 & echo $! > ${pidFile}`]));
    await c.exited;
    const bg = Number(readFileSync(pidFile, 'utf8'));
    await until(() => {
      const info = processInfo(bg);
      return info === undefined || info.zombie;
    }, 'the background sleep to be killed');
  });

  it('keeps the files of the current and the previous instance only', async () => {
    const a = agent();
    for (let n = 0; n < 4; n++) {
      await (
        await start(a, spec('app', ['echo', `run ${n}`], { restartCount: n }))
      ).exited;
    }
    expect(await a.logs.instanceNumbers(POD, 'app')).toEqual([2, 3]);
    expect((await a.runtime.instances(POD, 'app')).map((r) => r.restartCount)).toEqual([2, 3]);
    expect(await readLogs(a.logs, 'app', true)).toBe('run 2\n');
  });

  it('refuses to start an instance that is already running', async () => {
    const a = agent();
    const c = await start(a, spec('app', ['sleep', '30']));
    await expect(a.runtime.start(spec('app', ['sleep', '30']))).rejects.toThrow(/already running/);
    await a.runtime.stop(c, 0);
  });
});

describe('ProcessRuntime.stop', () => {
  it('sends SIGTERM to the process group: a process that traps it ends as it chooses', async () => {
    const a = agent();
    const c = await start(
      a,
      spec('app', [
        'sh',
        '-c',
        'trap "echo got TERM; exit 0" TERM; echo ready; while :; do sleep 0.05; done',
      ]),
    );
    await until(() => logOf('app').includes('ready'), 'the container to start');
    const exit = await a.runtime.stop(c, 10_000);
    expect(exit).toMatchObject({ exitCode: 0, reason: 'Completed' });
    expect(logOf('app')).toContain('got TERM');
  });

  it('reports a process ended by SIGTERM as 143/SIGTERM, also when stopped right after start', async () => {
    const a = agent();
    // start() returns once the command runs: a TERM sent at once is not lost in the wrapper.
    for (let n = 0; n < 5; n++) {
      const c = await start(a, spec('app', ['sleep', '30'], { restartCount: n }));
      const began = Date.now();
      const exit = await a.runtime.stop(c, 20_000);
      expect(exit).toMatchObject({ exitCode: 143, signal: 'SIGTERM', reason: 'Error' });
      expect(Date.now() - began).toBeLessThan(10_000);
    }
  });

  it('SIGKILLs the group when the grace period (on the clock) runs out: 137/SIGKILL', async () => {
    const clock = new FakeClock();
    const a = agent({ clock });
    const c = await start(
      a,
      spec('app', ['sh', '-c', 'trap "" TERM; echo ready; while :; do sleep 0.05; done']),
    );
    await until(() => logOf('app').includes('ready'), 'the container to start');
    const stopping = a.runtime.stop(c, 30_000);
    await until(() => clock.pendingTimers() > 0, 'the grace timer');
    await new Promise((resolve) => setTimeout(resolve, 200));
    const startTime = stateOf('app').startTime;
    expect(isSameProcess(c.pid, startTime)).toBe(true); // TERM ignored: still there
    clock.advance(30_000);
    const exit = await stopping;
    expect(exit).toMatchObject({ exitCode: 137, signal: 'SIGKILL', reason: 'Error' });
    expect(existsSync(path.join(dataDir, 'pods', POD, 'app', '0.exit'))).toBe(false);
  });

  it('refuses a container it does not know', async () => {
    const a = agent();
    const stranger: RunningContainer = {
      id: `${POD}/x/0`,
      podUid: POD,
      name: 'x',
      restartCount: 0,
      pid: 1,
      startedAt: 0,
      exited: new Promise(() => undefined),
    };
    await expect(a.runtime.stop(stranger, 0)).rejects.toThrow(/not known to this runtime.*recover\(\)/);
  });
});

describe('ProcessRuntime.recover', () => {
  /** Starts argv under the wrapper as an earlier agent did: detached, unref'd, state file by hand. */
  function startAsEarlierAgent(name: string, argv: string[]): { pid: number; startTime: string } {
    const dir = path.join(dataDir, 'pods', POD, name);
    mkdirSync(dir, { recursive: true });
    const log = path.join(dir, '0.log');
    const { file, args } = wrapperInvocation({
      argv,
      exitFile: path.join(dir, '0.exit'),
      startedFile: path.join(dir, '0.started'),
    });
    const child = spawn(file, args, { detached: true, stdio: ['ignore', 'ignore', 'ignore'], cwd: '/' });
    child.unref();
    const pid = child.pid as number;
    killAtEnd(pid);
    const startTime = processStartTime(pid) as string;
    const state: InstanceState = { pid, startTime, startedAt: Date.now(), argv };
    writeFileSync(path.join(dir, '0.json'), JSON.stringify(state));
    writeFileSync(log, '');
    return { pid, startTime };
  }

  it('adopts a container still running from an earlier agent, and learns its end from the exit file', async () => {
    const { pid } = startAsEarlierAgent('app', ['sleep', '30']);
    const a = agent();
    const found = await a.runtime.recover();
    expect(found.map((c) => [c.id, c.pid])).toEqual([[`${POD}/app/0`, pid]]);
    expect(await a.runtime.recover()).toEqual([]); // reported once
    expect(await a.runtime.stop(found[0], 5000)).toMatchObject({ exitCode: 143, signal: 'SIGTERM' });
    expect(stateOf('app').exit).toMatchObject({ exitCode: 143 });
  });

  it('reports a container that ended while the agent was down with its real exit code and time', async () => {
    const { pid, startTime } = startAsEarlierAgent('app', ['sh', '-c', 'exit 7']);
    await until(() => !isSameProcess(pid, startTime), 'the container to end');
    await until(() => existsSync(path.join(dataDir, 'pods', POD, 'app', '0.exit')), 'the exit file');
    const a = agent();
    const [c] = await a.runtime.recover();
    const exit = await c.exited;
    expect(exit).toMatchObject({ exitCode: 7, reason: 'Error' });
    expect(Math.abs(exit.finishedAt - Date.now())).toBeLessThan(10_000);
    // Recorded: the next agent gets it as the container's newest instance, ended as recorded.
    const b = agent();
    const [again] = await b.runtime.recover();
    expect(again).toMatchObject({ id: c.id, restartCount: 0 });
    expect(await again.exited).toEqual(exit);
    expect(await b.runtime.stop(again, 0)).toEqual(exit);
    expect(await b.runtime.recover()).toEqual([]); // reported once
    expect(await b.runtime.lastExit(POD, 'app')).toMatchObject({ restartCount: 0, exit: { exitCode: 7 } });
  });

  it("reports a container's newest finished instance, for its restart count, when none runs", async () => {
    const first = agent();
    for (const restartCount of [0, 1]) {
      const c = await start(first, spec('app', ['sh', '-c', `exit ${restartCount + 3}`], { restartCount }));
      await c.exited;
    }
    const running = await start(first, spec('web', ['sleep', '30']));
    first.runtime.close();
    first.logs.close();

    const found = await agent().runtime.recover();
    expect(found.map((c) => c.id).sort()).toEqual([`${POD}/app/1`, running.id]);
    const app = found.find((c) => c.name === 'app')!;
    expect(await app.exited).toMatchObject({ exitCode: 4, reason: 'Error' });
  });

  it('never takes a reused pid for its container: another start time means it ended', async () => {
    const stranger = spawn('sleep', ['30'], { stdio: 'ignore' });
    cleanup.push(() => {
      stranger.kill('SIGKILL');
    });
    const pid = stranger.pid as number;
    const dir = path.join(dataDir, 'pods', POD, 'app');
    mkdirSync(dir, { recursive: true });
    const wrongStart = String(Number(processStartTime(pid)) - 100);
    const state: InstanceState = { pid, startTime: wrongStart, startedAt: Date.now(), argv: ['x'] };
    writeFileSync(path.join(dir, '0.json'), JSON.stringify(state));
    const a = agent();
    const [c] = await a.runtime.recover();
    expect(await c.exited).toMatchObject({ exitCode: 137, signal: 'SIGKILL' });
    expect(await a.runtime.stop(c, 0)).toMatchObject({ exitCode: 137 });
    expect(isSameProcess(pid, processStartTime(pid) as string)).toBe(true); // left alone
  });

  it('refuses to start a copy of an instance that still runs from an earlier agent', async () => {
    startAsEarlierAgent('app', ['sleep', '30']);
    const a = agent();
    await expect(a.runtime.start(spec('app', ['sleep', '30']))).rejects.toThrow(/adopt it with recover\(\)/);
    const [adopted] = await a.runtime.recover();
    await a.runtime.stop(adopted, 0);
  });

  it('a second runtime on the same dataDir adopts what the first started (an agent restart)', async () => {
    const first = agent();
    const c = await start(
      first,
      spec('app', [
        'sh',
        '-c',
        'trap "echo got TERM; exit 0" TERM; echo ready; while :; do sleep 0.05; done',
      ]),
    );
    await until(() => logOf('app').includes('ready'), 'the container to start');
    first.runtime.close();
    first.logs.close();
    const second = agent();
    const [adopted] = await second.runtime.recover();
    expect(adopted).toMatchObject({ id: c.id, pid: c.pid, startedAt: c.startedAt });
    expect(await second.runtime.stop(adopted, 5000)).toMatchObject({ exitCode: 0, reason: 'Completed' });
    // (The container's sh may also print "Terminated" for its `sleep`: the whole group got TERM.)
    expect(await readLogs(second.logs, 'app')).toMatch(/^ready\n(Terminated\n)?got TERM\n$/);
  });

  it('adopts the container of an agent process that exited, which the container outlived', async () => {
    const script = path.join(dataDir, 'agent.mts'); // .mts: ESM (top-level await) outside the repo
    writeFileSync(
      script,
      `import { quietLogger } from ${JSON.stringify(path.join(repoRoot, 'agent/logger.ts'))};
import { LogStore } from ${JSON.stringify(path.join(repoRoot, 'agent/runtime/logs.ts'))};
import { ProcessRuntime } from ${JSON.stringify(path.join(repoRoot, 'agent/runtime/process.ts'))};
const dataDir = process.argv[2];
const logs = new LogStore({ dataDir });
const runtime = new ProcessRuntime({ dataDir, logs, logger: quietLogger() });
const base = { podUid: ${JSON.stringify(POD)}, podKey: 'default/web', restartCount: 0, env: {} };
const running = await runtime.start({ ...base, name: 'app', argv: ['sh', '-c', 'echo before; trap "echo got TERM; exit 0" TERM; while :; do echo tick; sleep 0.1; done'] });
const ending = await runtime.start({ ...base, name: 'job', argv: ['sh', '-c', 'sleep 0.3; echo bye; exit 5'] });
console.log(JSON.stringify([running.pid, ending.pid]));
process.exit(0);
`,
    );
    const earlier = spawn(process.execPath, ['--import', 'tsx', script, dataDir], {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    earlier.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    const code = await new Promise<number | null>((resolve) => earlier.once('exit', resolve));
    expect(code).toBe(0);
    const [runningPid, endingPid] = JSON.parse(out) as number[];
    killAtEnd(runningPid);
    killAtEnd(endingPid);
    // The agent is gone; its containers are not: one runs on (still logging), one ends.
    await until(() => logOf('job').includes('bye'), 'the job to finish', 15_000);
    const ticks = logOf('app').split('tick').length;
    await until(
      () => logOf('app').split('tick').length > ticks + 2,
      'the container to log without its agent',
    );

    const a = agent();
    const found = await a.runtime.recover();
    const byName = Object.fromEntries(found.map((c) => [c.name, c]));
    expect(Object.keys(byName).sort()).toEqual(['app', 'job']);
    expect(byName.app.pid).toBe(runningPid);
    expect(await byName.job.exited).toMatchObject({ exitCode: 5, reason: 'Error' });
    expect(await a.runtime.stop(byName.app, 5000)).toMatchObject({ exitCode: 0, reason: 'Completed' });
    const log = await readLogs(a.logs, 'app');
    expect(log.startsWith('before\ntick\n')).toBe(true);
    expect(log.endsWith('got TERM\n')).toBe(true);
  });
});

describe('ProcessRuntime.removePod', () => {
  it('kills what still runs and deletes the pod directory', async () => {
    const a = agent();
    const c = await start(a, spec('app', ['sleep', '30']));
    const startTime = stateOf('app').startTime;
    await a.runtime.removePod(POD);
    expect(existsSync(path.join(dataDir, 'pods', POD))).toBe(false);
    expect(isSameProcess(c.pid, startTime)).toBe(false);
    expect(await c.exited).toMatchObject({ exitCode: 137, signal: 'SIGKILL' });
  });
});

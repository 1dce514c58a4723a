/**
 * The agent for the lab's other machines, built on this one (`npm run build:agent`): the
 * linux-arm64 executable (a Raspberry Pi's) runs under qemu-user — Debian's qemu-user-static,
 * with the arm64 C library of libc6-arm64-cross and libstdc++6-arm64-cross, as .ci/run
 * installs them — and joins a real `kubelab server`, reading this machine through the agent's
 * Linux code, as it would on a Pi. The Windows executable cannot run here: it is checked as a
 * file (a PE for x64 carrying the single-executable blob, with Node's fuse set).
 */
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { NtExecutable, NtExecutableResource } from 'pe-library';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Node } from '../../client/api/types.js';
import type { Client } from '../../client/client.js';
import { TokensClient } from '../../client/grpc/cluster.js';
import { grpcClient } from '../../client/grpc/transport.js';
import { killAgent } from '../support/agentproc.js';
import { startServerProcess, type ServerProcess } from '../support/serverproc.js';
import { eventually } from '../support/wait.js';

const run = promisify(execFile);
const root = join(import.meta.dirname, '..', '..');
const FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';
const SYSROOT = '/usr/aarch64-linux-gnu';

function onPath(cmd: string): string | undefined {
  return (process.env.PATH ?? '')
    .split(':')
    .map((dir) => join(dir, cmd))
    .find((f) => existsSync(f));
}
const qemu = onPath('qemu-aarch64-static');
const noQemu = !qemu
  ? 'qemu-aarch64-static is not installed (Debian: qemu-user-static; .ci/run installs it)'
  : !existsSync(join(SYSROOT, 'lib', 'ld-linux-aarch64.so.1'))
    ? `no arm64 C library in ${SYSROOT} (Debian: libc6-arm64-cross libstdc++6-arm64-cross; .ci/run installs them)`
    : undefined;

let out: string;
let buildLog = '';
beforeAll(() => {
  out = mkdtempSync(join(tmpdir(), 'kubelab-crossbuild-'));
  buildLog = execFileSync(
    process.execPath,
    [join(root, 'scripts', 'build-agent.mjs'), '--out', out, '--platforms', 'linux-arm64,windows-x64'],
    { stdio: 'pipe', encoding: 'utf8' },
  );
}, 180_000);
afterAll(() => rmSync(out, { recursive: true, force: true }));

it('builds only the platforms asked for, each with a checksum that sha256sum accepts', async () => {
  expect(existsSync(join(out, 'kubelab-agent-linux-x64')), buildLog).toBe(false);
  const { stdout } = await run(
    'sha256sum',
    ['--check', 'kubelab-agent-linux-arm64.sha256', 'kubelab-agent-windows-x64.exe.sha256'],
    { cwd: out },
  );
  expect(stdout).toBe('kubelab-agent-linux-arm64: OK\nkubelab-agent-windows-x64.exe: OK\n');
});

it('fetches the Node binaries once: a second fetch finds them in .cache/node and needs no registry', async () => {
  // A registry that cannot answer: the cached binaries must not need it.
  const { stdout, stderr } = await run(
    process.execPath,
    [join(root, 'scripts', 'fetch-node.mjs'), '--platforms', 'linux-arm64,windows-x64'],
    { env: { ...process.env, npm_config_registry: 'http://127.0.0.1:9/' } },
  );
  expect(stdout + stderr).toBe('');
  for (const p of ['linux-arm64', 'windows-x64'])
    expect(
      readFileSync(join(root, '.cache', 'node', `${p}-${process.version.slice(1)}`, 'SOURCE'), 'utf8'),
    ).toMatch(/^node-(linux-arm64|win-x64)@\d+\.\d+\.\d+\nsha512-/);
});

it(`the linux-arm64 agent runs under qemu and its Node becomes Ready with this machine's capacity${noQemu ? ` (skipped: ${noQemu})` : ''}`, async (ctx) => {
  if (noQemu) return ctx.skip();
  const exe = join(out, 'kubelab-agent-linux-arm64');
  // An ELF file for AArch64 (e_machine 183): not this machine's executable.
  const head = readFileSync(exe).subarray(0, 20);
  expect(head.subarray(0, 4).toString('latin1')).toBe('\x7fELF');
  expect(head.readUInt16LE(18)).toBe(183);

  // No Node, no sources, a bare environment: what a Pi has.
  const env = { PATH: '/usr/bin:/bin', HOME: out };
  const underQemu = (args: string[]) => ['-L', SYSROOT, exe, ...args];
  expect((await run(qemu!, underQemu(['--version']), { cwd: out, env })).stdout.trim()).toBe('0.1.0');
  expect((await run(qemu!, underQemu(['--help']), { cwd: out, env })).stdout).toContain('--eviction-hard');

  let server: ServerProcess | undefined;
  let admin: Client | undefined;
  let agent: ChildProcess | undefined;
  let output = '';
  try {
    server = await startServerProcess();
    const connection = { server: `127.0.0.1:${server.port}`, caPem: server.caPem, token: server.adminToken };
    admin = grpcClient(connection);
    const tokens = new TokensClient(connection);
    const token = (await tokens.create()).token!;
    tokens.close();
    agent = spawn(
      qemu!,
      underQemu([
        '--server',
        `https://127.0.0.1:${server.port}`,
        '--data-dir',
        join(out, 'data'),
        '--node-name',
        'pi',
        '--log-level',
        'warn',
      ]),
      // The token in the environment, as install.sh passes it.
      { cwd: out, env: { ...env, KUBELAB_TOKEN: token }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    agent.stdout!.on('data', (d: Buffer) => (output += d));
    agent.stderr!.on('data', (d: Buffer) => (output += d));

    let node: Node | undefined;
    const ready = eventually(
      async () => {
        node = await admin!.get('Node', 'pi');
        return node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
      },
      'node pi (the arm64 agent under qemu) to be Ready',
      // qemu translates every instruction: the agent starts in seconds, not in a blink.
      120_000,
      200,
    );
    const exited = new Promise<never>((_, reject) =>
      agent!.once('exit', (code, signal) => reject(new Error(`the agent exited (${signal ?? code})`))),
    );
    try {
      await Promise.race([ready, exited]);
    } catch (err) {
      throw new Error(`${(err as Error).message}; the agent's output:\n${output}`, { cause: err });
    } finally {
      ready.catch(() => undefined);
      exited.catch(() => undefined);
    }
    // The agent read the machine it runs on — the same kernel, seen through arm64 code.
    expect(node!.status!.nodeInfo).toMatchObject({ architecture: 'arm64', operatingSystem: 'linux' });
    const memTotalKiB = /^MemTotal:\s+(\d+) kB/m.exec(readFileSync('/proc/meminfo', 'utf8'))![1];
    expect(node!.status!.capacity).toMatchObject({
      cpu: String(availableParallelism()),
      memory: `${memTotalKiB}Ki`,
    });
    expect(output).toContain('node pi reporting to');

    await killAgent(agent, 'SIGTERM');
    expect(agent.exitCode, output).toBe(0);
  } finally {
    if (agent) await killAgent(agent);
    admin?.close();
    await server?.stop();
  }
}, 180_000);

it('the windows-x64 agent is a PE executable for x64 that carries the agent as its single-executable blob', () => {
  const bytes = readFileSync(join(out, 'kubelab-agent-windows-x64.exe'));
  expect(bytes.subarray(0, 2).toString('latin1')).toBe('MZ');
  const pe = bytes.readUInt32LE(0x3c);
  expect(bytes.subarray(pe, pe + 4).toString('latin1')).toBe('PE\0\0');
  expect(bytes.readUInt16LE(pe + 4)).toBe(0x8664); // IMAGE_FILE_MACHINE_AMD64

  // pe-library refuses to parse a signed file unless told to: nodejs.org's signature, which the
  // injection would leave invalid, was removed.
  const exe = NtExecutable.from(bytes);
  expect(exe.is32bit()).toBe(false);
  const blob = NtExecutableResource.from(exe).entries.find((e) => e.type === 10 && e.id === 'NODE_SEA_BLOB');
  expect(blob, 'an RT_RCDATA resource NODE_SEA_BLOB').toBeDefined();
  const data = Buffer.from(blob!.bin);
  expect(data.readUInt32LE(0)).toBe(0x0143da20); // Node's single-executable blob magic
  // Without a code cache the blob holds the bundle as it is: this build's agent.
  expect(data.includes(readFileSync(join(out, 'kubelab-agent.cjs')))).toBe(true);
  // …and not the folder it was built in: two builds of one tree give the same executables.
  expect(data.includes(Buffer.from(out))).toBe(false);

  // Node looks for the fuse once at start: set (":1"), it runs the blob instead of being node.
  const fuse = bytes.indexOf(FUSE);
  expect(fuse).toBeGreaterThan(0);
  expect(bytes.subarray(fuse, fuse + FUSE.length + 2).toString('latin1')).toBe(`${FUSE}:1`);
  expect(bytes.indexOf(FUSE, fuse + 1)).toBe(-1);
});

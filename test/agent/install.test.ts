/**
 * Adding a machine as a user does: the one line `kubelab token create` prints, run as printed
 * (install prefix in a temporary folder; no service manager here, so the script says how to
 * start the agent and the test starts it that way). The control plane serves the script, its
 * CA and the agent executable it was started with (--agent-dir). A token pinning another CA,
 * and an executable that is not the one the control plane built, are refused before anything
 * is installed; re-running the line without a token upgrades in place, keeping the node's
 * identity; --uninstall removes it all.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import {
  appendFileSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { AGENT_UPGRADE_ANNOTATION } from '../../client/api/agentversion.js';
import type { Client } from '../../client/client.js';
import { TokensClient } from '../../client/grpc/cluster.js';
import { grpcClient } from '../../client/grpc/transport.js';
import { startServerProcess, type ServerProcess } from '../support/serverproc.js';
import { eventually } from '../support/wait.js';

const root = join(import.meta.dirname, '..', '..');
const EXE = 'kubelab-agent-linux-x64';
let agents: string;
let dir: string;
let server: ServerProcess;
let admin: Client;
let url: string;
let agent: ChildProcess | undefined;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kubelab-install-'));
  agents = join(dir, 'agents');
  execFileSync(
    process.execPath,
    [join(root, 'scripts', 'build-agent.mjs'), '--out', agents, '--platforms', 'linux-x64'],
    { stdio: 'pipe' },
  );
  server = await startServerProcess(['--agent-dir', agents]);
  url = `https://127.0.0.1:${server.port}`;
  admin = grpcClient({ server: `127.0.0.1:${server.port}`, caPem: server.caPem, token: server.adminToken });
}, 240_000);

afterAll(async () => {
  if (agent?.pid) {
    try {
      process.kill(-agent.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  admin?.close();
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function joinToken(): Promise<string> {
  const tokens = new TokensClient({
    server: `127.0.0.1:${server.port}`,
    caPem: server.caPem,
    token: server.adminToken,
  });
  try {
    return (await tokens.create({ role: 'join' })).token!;
  } finally {
    tokens.close();
  }
}

/** The printed one-liner, with the test's install prefix, through a real shell. */
function install(token: string | undefined, prefix: string, ...rest: string[]) {
  const line = `curl -fsSLk ${url}/install.sh | sh -s - --server ${url} --prefix ${prefix} ${rest.join(' ')}`;
  return spawnSync('sh', ['-c', line], {
    env: { PATH: process.env.PATH, ...(token ? { KUBELAB_TOKEN: token } : {}) },
    encoding: 'utf8',
  });
}

it('`kubelab token create` prints the line, which fetches the served script', async () => {
  const printed = spawnSync(
    process.execPath,
    [join(root, 'bin', 'kubelab.mjs'), 'token', 'create', '--data-dir', server.dataDir],
    { encoding: 'utf8' },
  );
  expect(printed.status, printed.stderr).toBe(0);
  expect(printed.stderr).toContain(
    `curl -fsSLk ${url}/install.sh | sudo KUBELAB_TOKEN='${printed.stdout.trim()}' sh -s - --server ${url}`,
  );
  expect(printed.stderr).toContain(`iex (irm ${url}/install.ps1)`);
  const script = execFileSync('curl', ['-fsSk', `${url}/install.sh`]).toString();
  expect(script).toBe(readFileSync(join(root, 'agent', 'packaging', 'install.sh'), 'utf8'));
  // A platform this control plane has not built, and names outside the folder, are not served.
  const missing = spawnSync('curl', ['-sk', `${url}/agent/kubelab-agent-linux-arm64`], { encoding: 'utf8' });
  expect(JSON.parse(missing.stdout)).toMatchObject({
    code: 404,
    message: expect.stringContaining(
      'has no kubelab-agent-linux-arm64: build the agents with `npm run build:agent`',
    ),
  });
  const outside = spawnSync('curl', ['-sk', '--path-as-is', `${url}/agent/..%2f..%2fpki%2fca.key`], {
    encoding: 'utf8',
  });
  expect(JSON.parse(outside.stdout)).toMatchObject({ code: 404 });
});

it('refuses a token that pins another CA, and an executable the control plane did not build', async () => {
  const token = await joinToken();
  const prefix = join(dir, 'refused');
  const wrongCa = token.replace(/^K10[0-9a-f]{64}/, `K10${'0'.repeat(64)}`);
  const refused = install(wrongCa, prefix);
  expect(refused.status).toBe(1);
  expect(refused.stderr).toContain('does not match the join token');
  expect(existsSync(join(prefix, 'usr', 'local', 'bin', 'kubelab-agent'))).toBe(false);

  const exe = join(agents, EXE);
  const size = statSync(exe).size;
  appendFileSync(exe, 'tampered');
  try {
    const tampered = install(token, prefix);
    expect(tampered.status).toBe(1);
    expect(tampered.stderr).toContain(`the downloaded ${EXE} is not the one the control plane built`);
    expect(existsSync(join(prefix, 'usr', 'local', 'bin', 'kubelab-agent'))).toBe(false);
  } finally {
    truncateSync(exe, size);
  }
});

it('installs, says how to start the agent where no service manager runs, joins, upgrades in place (by the script and by the agent) and uninstalls', async () => {
  const token = await joinToken();
  const prefix = join(dir, 'lab');
  const first = install(token, prefix, '--', '--node-name', 'installed-1');
  expect(first.status, first.stderr).toBe(0);
  expect(first.stdout).toContain(`downloading ${EXE} from ${url}`);
  expect(first.stdout).toContain('no service manager here, so start it yourself');
  const etc = join(prefix, 'etc', 'kubelab-agent');
  expect(statSync(join(etc, 'agent.env')).mode & 0o777).toBe(0o600);
  expect(readFileSync(join(etc, 'ca.crt'), 'utf8')).toBe(server.caPem);

  const start = first.stdout.trim().split('\n').at(-1)!.trim();
  expect(start).toMatch(/^sh -c '/);
  // INVOCATION_ID is what systemd gives a service: the agent may then exit to be restarted.
  // Its own process group: the printed line is a shell running a shell, and both must go.
  agent = spawn('sh', ['-c', start], {
    env: { PATH: process.env.PATH, INVOCATION_ID: 'test' },
    stdio: 'ignore',
    detached: true,
  });
  await eventually(
    async () => {
      const node = await admin.get('Node', 'installed-1').catch(() => undefined);
      return node?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
    },
    'the installed agent to join and become Ready',
    60_000,
  );
  // The GUI's "Upgrade": the annotation on the Node. The agent replaces itself, takes the
  // annotation away, says so in an event and exits for its service manager to restart it.
  const exited = new Promise<number | null>((resolve) => agent!.once('exit', resolve));
  await admin.patch('Node', 'installed-1', {
    metadata: { annotations: { [AGENT_UPGRADE_ANNOTATION]: 'force' } },
  });
  expect(await exited).toBe(0);
  agent = undefined;
  const node = await admin.get('Node', 'installed-1');
  expect(node.metadata?.annotations?.[AGENT_UPGRADE_ANNOTATION]).toBeUndefined();
  const events = (await admin.list('Event', { namespace: 'default' })).items;
  expect(events.map((e) => `${e.reason}: ${e.message}`)).toContain(
    'AgentUpgraded: kubelab-agent 0.1.0 replaced by 0.1.0; restarting under systemd',
  );

  // Again without a token: an upgrade in place, under the same credential.
  const credentials = readFileSync(join(prefix, 'var', 'lib', 'kubelab-agent', 'credentials.json'), 'utf8');
  const again = install(undefined, prefix, '--', '--node-name', 'installed-1');
  expect(again.status, again.stderr).toBe(0);
  expect(readFileSync(join(prefix, 'var', 'lib', 'kubelab-agent', 'credentials.json'), 'utf8')).toBe(
    credentials,
  );
  expect(readFileSync(join(etc, 'agent.env'), 'utf8')).toContain(`KUBELAB_TOKEN=${token}`);

  // The agent upgrades itself from the control plane: nothing to do at the same version;
  // forced, the executable is swapped; a tampered download is refused and changes nothing.
  const exe = join(prefix, 'usr', 'local', 'bin', 'kubelab-agent');
  const upgrade = (...args: string[]) =>
    spawnSync(exe, ['upgrade', '--data-dir', join(prefix, 'var', 'lib', 'kubelab-agent'), ...args], {
      env: { PATH: process.env.PATH },
      encoding: 'utf8',
    });
  const same = upgrade();
  expect(same.status, same.stderr).toBe(0);
  expect(same.stdout).toContain("already at 0.1.0, the control plane's version: nothing to do");
  const forced = upgrade('--force');
  expect(forced.status, forced.stderr).toBe(0);
  expect(forced.stdout).toContain(`replaced ${exe}: 0.1.0 → 0.1.0`);
  expect(forced.stdout).toContain('restart the agent yourself');
  const served = join(agents, EXE);
  const size = statSync(served).size;
  appendFileSync(served, 'tampered');
  try {
    const refused = upgrade('--force');
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain(`the downloaded ${EXE} is not the one the control plane built`);
    expect(existsSync(`${exe}.new`)).toBe(false);
  } finally {
    truncateSync(served, size);
  }

  const removed = install(undefined, prefix, '--uninstall');
  expect(removed.status, removed.stderr).toBe(0);
  for (const p of ['usr/local/bin/kubelab-agent', 'etc/kubelab-agent', 'var/lib/kubelab-agent'])
    expect(existsSync(join(prefix, p)), p).toBe(false);
}, 120_000);

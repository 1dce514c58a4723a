/**
 * A real agent (started as root where the test runs as root) runs process pods as a user would
 * see them: one whose environment comes from a ConfigMap and a Secret — a missing Secret holds
 * the container with CreateContainerConfigError until it is created, the process then sees the
 * values, and the Secret's value appears in no log line of the server or the agent (both at
 * debug level) and in no file of the server's data folder; one with runAsUser 65534, whose
 * process runs as 65534 (/proc/<pid>/status) and whose log belongs to it; and one with
 * runAsNonRoot and no user on a node whose default user is root, refused with Kubernetes' message.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { userByUid } from '../../agent/pods/users.js';
import type { Pod } from '../../client/api/types.js';
import type { Client } from '../../client/client.js';
import { TokensClient } from '../../client/grpc/cluster.js';
import { grpcClient } from '../../client/grpc/transport.js';
import {
  agentLogs,
  killAgent,
  killProcessesWith,
  processesWith,
  startAgentProcess,
  waitForNodeReady,
} from '../support/agentproc.js';
import { startServerProcess, type ServerProcess } from '../support/serverproc.js';
import { expectSecretNowhere } from '../support/secretleaks.js';
import { eventually } from '../support/wait.js';
import type { ChildProcess } from 'node:child_process';

const VALUE = 'sw0rdfish-9f3c1a';
const MARKER = `configenv-${process.pid}`;

let server: ServerProcess;
let admin: Client;
let agent: ChildProcess;
let dir: string;

beforeAll(async () => {
  server = await startServerProcess(['--log-level', 'debug']);
  const connection = { server: `127.0.0.1:${server.port}`, caPem: server.caPem, token: server.adminToken };
  admin = grpcClient(connection);
  const tokens = new TokensClient(connection);
  const join_ = (await tokens.create({ role: 'join' })).token!;
  tokens.close();
  dir = mkdtempSync(join(tmpdir(), 'kubelab-configenv-'));
  agent = startAgentProcess({
    server: `127.0.0.1:${server.port}`,
    dataDir: join(dir, 'agent'),
    nodeName: 'cfg-1',
    token: join_,
    args: ['--log-level', 'debug'],
  });
  await waitForNodeReady(admin, 'cfg-1', agent);
}, 90_000);

afterAll(async () => {
  if (agent) await killAgent(agent);
  killProcessesWith(MARKER);
  admin?.close();
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

it('takes env from a ConfigMap and a Secret, waiting with CreateContainerConfigError for a missing one', async () => {
  await admin.create({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'settings', namespace: 'default' },
    data: { MODE: 'fast', '1st': 'x' },
  });
  const pod: Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'env', namespace: 'default' },
    spec: {
      nodeName: 'cfg-1',
      restartPolicy: 'Never',
      containers: [
        {
          name: 'main',
          command: [
            'sh',
            '-c',
            `echo "mode=$CFG_MODE password=$PASSWORD user=$DB_USER" > ${join(dir, 'out.txt')} # ${MARKER}`,
          ],
          envFrom: [
            { prefix: 'CFG_', configMapRef: { name: 'settings' } },
            { configMapRef: { name: 'settings' } },
          ],
          env: [
            { name: 'PASSWORD', valueFrom: { secretKeyRef: { name: 'db', key: 'password' } } },
            { name: 'DB_USER', valueFrom: { secretKeyRef: { name: 'db', key: 'user', optional: true } } },
          ],
        },
      ],
    },
  };
  await admin.create(pod);
  await eventually(async () => {
    const st = (await admin.get('Pod', 'env', { namespace: 'default' })).status?.containerStatuses?.[0]?.state
      ?.waiting;
    return st?.reason === 'CreateContainerConfigError' && st.message === 'secret "db" not found';
  }, 'the container to wait for its Secret');

  await admin.create({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'db', namespace: 'default' },
    stringData: { password: VALUE },
  });
  await eventually(
    async () => (await admin.get('Pod', 'env', { namespace: 'default' })).status?.phase === 'Succeeded',
    'the pod to run once the Secret exists',
    60_000,
  );
  expect(readFileSync(join(dir, 'out.txt'), 'utf8')).toBe(`mode=fast password=${VALUE} user=\n`);
  const events = (await admin.list('Event', { namespace: 'default' })).items.map(
    (e) => `${e.reason}: ${e.message}`,
  );
  expect(events).toContain('Failed: Error: secret "db" not found');
  expect(events).toContain(
    'InvalidEnvironmentVariableNames: Keys [1st] from the EnvFrom configMap or secret were skipped since they are invalid environment variable names.',
  );

  // The value is nowhere but in the process: not in logs, events, or the server's files.
  expectSecretNowhere(VALUE, [server.output(), ...(agentLogs.get(agent) ?? [])].join('\n'), server.dataDir);
  expect(JSON.stringify(events)).not.toContain(VALUE);
}, 120_000);

const isRoot = process.getuid?.() === 0;

it.runIf(isRoot)(
  'runs a process as runAsUser, with its log owned by that user',
  async () => {
    await admin.create<Pod>({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'nobody', namespace: 'default' },
      spec: {
        nodeName: 'cfg-1',
        securityContext: { runAsUser: 65534, supplementalGroups: [4242] },
        containers: [
          {
            name: 'main',
            command: ['sh', '-c', `echo "$HOME"; sleep 300 # ${MARKER}-nobody`],
            securityContext: { allowPrivilegeEscalation: false },
          },
        ],
      },
    });
    let pid = 0;
    await eventually(
      () => {
        for (const p of processesWith(`${MARKER}-nobody`)) {
          // The container's own process, not the wrapper that runs it.
          if (readFileSync(`/proc/${p}/cmdline`, 'utf8').startsWith('sh\0-c\0')) pid = p;
        }
        return pid !== 0;
      },
      'the container process',
      30_000,
    );
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    expect(status).toMatch(/^Uid:\s+65534\s+65534\s+65534\s+65534$/m);
    expect(status).toMatch(/^Gid:\s+65534\s+65534\s+65534\s+65534$/m);
    expect(status).toMatch(/^Groups:\s+4242\s*$/m);
    expect(status).toMatch(/^NoNewPrivs:\s+1$/m);
    const pod = await admin.get('Pod', 'nobody', { namespace: 'default' });
    const log = join(dir, 'agent', 'pods', pod.metadata!.uid!, 'main', '0.log');
    expect(statSync(log).uid).toBe(65534);
    // HOME is the user's, from /etc/passwd (nobody's is /nonexistent on Debian), else /.
    expect(readFileSync(log, 'utf8')).toBe(`${userByUid(65534)?.home ?? '/'}\n`);
    await admin.delete('Pod', 'nobody', { namespace: 'default', gracePeriodSeconds: 0 });
  },
  60_000,
);

it.runIf(isRoot)(
  'refuses runAsNonRoot without a user when the node default is root',
  async () => {
    await admin.create<Pod>({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'nonroot', namespace: 'default' },
      spec: {
        nodeName: 'cfg-1',
        securityContext: { runAsNonRoot: true },
        containers: [{ name: 'main', command: ['sh', '-c', `sleep 300 # ${MARKER}-nonroot`] }],
      },
    });
    await eventually(async () => {
      const pod = await admin.get('Pod', 'nonroot', { namespace: 'default' });
      const waiting = pod.status?.containerStatuses?.[0]?.state?.waiting;
      return (
        waiting?.reason === 'CreateContainerConfigError' &&
        waiting.message ===
          `container has runAsNonRoot and image will run as root (pod: "nonroot_default(${pod.metadata?.uid})", container: main)`
      );
    }, 'the container to be refused with CreateContainerConfigError');
    expect(processesWith(`${MARKER}-nonroot`)).toEqual([]);
  },
  60_000,
);

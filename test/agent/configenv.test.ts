/**
 * A real agent runs a process pod whose environment comes from a ConfigMap and a Secret: a
 * missing Secret holds the container with CreateContainerConfigError until it is created; the
 * process then sees the values; the Secret's value appears in no log line of the server or the
 * agent (both at debug level) and in no file of the server's data folder.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Pod } from '../../client/api/types.js';
import type { Client } from '../../client/client.js';
import { TokensClient } from '../../client/grpc/cluster.js';
import { grpcClient } from '../../client/grpc/transport.js';
import {
  agentLogs,
  killAgent,
  killProcessesWith,
  startAgentProcess,
  waitForNodeReady,
} from '../support/agentproc.js';
import { startServerProcess, type ServerProcess } from '../support/serverproc.js';
import { eventually } from '../support/wait.js';
import type { ChildProcess } from 'node:child_process';

const VALUE = 'sw0rdfish-9f3c1a';
const B64 = Buffer.from(VALUE).toString('base64');
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
  const logs = [server.output(), ...(agentLogs.get(agent) ?? [])].join('\n');
  expect(logs).not.toContain(VALUE);
  expect(logs).not.toContain(B64);
  expect(JSON.stringify(events)).not.toContain(VALUE);
  for (const f of readdirSync(server.dataDir, { recursive: true, withFileTypes: true })) {
    if (!f.isFile()) continue;
    const bytes = readFileSync(join(f.parentPath, f.name));
    expect(bytes.includes(VALUE), f.name).toBe(false);
    expect(bytes.includes(B64), f.name).toBe(false);
  }
}, 120_000);

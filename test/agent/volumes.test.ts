/**
 * A real agent (as root: a process container's volumes are bind-mounted in a mount namespace of
 * its own) runs a process pod as a user would see it: its files come from a ConfigMap and a
 * Secret mounted at paths of its choosing, its env from the same Secret; the pod waits in
 * ContainerCreating with a FailedMount event while the ConfigMap is missing and starts once it
 * exists; an update of the ConfigMap reaches the file (the agent runs with --sync-frequency 1s)
 * through the `..data` swap; the machine outside the container sees nothing at the mountPath;
 * deleting the pod removes the files; the Secret's value is in no log line of the server or
 * the agent, and in no file of the server's data folder.
 */
import type { ChildProcess } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
} from 'node:fs';
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
import { expectSecretNowhere } from '../support/secretleaks.js';
import { eventually } from '../support/wait.js';

const VALUE = 'c0rrect-h0rse-7d1e';
const MARKER = `volumes-${process.pid}`;
const isRoot = process.getuid?.() === 0;

let server: ServerProcess;
let admin: Client;
let agent: ChildProcess;
let dir: string;

beforeAll(async () => {
  if (!isRoot) return;
  server = await startServerProcess(['--log-level', 'debug']);
  const connection = { server: `127.0.0.1:${server.port}`, caPem: server.caPem, token: server.adminToken };
  admin = grpcClient(connection);
  const tokens = new TokensClient(connection);
  const join_ = (await tokens.create({ role: 'join' })).token!;
  tokens.close();
  dir = mkdtempSync(join(tmpdir(), 'kubelab-volumes-'));
  // The mount points lie under it: the pod's user must be able to walk there, as to /etc/app.
  chmodSync(dir, 0o755);
  agent = startAgentProcess({
    server: `127.0.0.1:${server.port}`,
    dataDir: join(dir, 'agent'),
    nodeName: 'vol-1',
    token: join_,
    args: ['--log-level', 'debug', '--sync-frequency', '1s'],
  });
  await waitForNodeReady(admin, 'vol-1', agent);
}, 90_000);

afterAll(async () => {
  if (!isRoot) return;
  if (agent) await killAgent(agent);
  killProcessesWith(MARKER);
  admin?.close();
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const getPod = () => admin.get('Pod', 'app', { namespace: 'default' });
const containerLog = (uid: string) => {
  try {
    return readFileSync(join(dir, 'agent', 'pods', uid, 'main', '0.log'), 'utf8');
  } catch {
    return '';
  }
};

it.runIf(isRoot)(
  'mounts a ConfigMap and a Secret as files, follows ConfigMap updates, and removes the files with the pod',
  async () => {
    const mnt = join(dir, 'mnt');
    await admin.create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'app-secret', namespace: 'default' },
      stringData: { password: VALUE },
    });
    const pod: Pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'app', namespace: 'default' },
      spec: {
        nodeName: 'vol-1',
        securityContext: { runAsUser: 65534, fsGroup: 4321 },
        volumes: [
          { name: 'config', configMap: { name: 'app-config' } },
          {
            name: 'secret',
            secret: {
              secretName: 'app-secret',
              defaultMode: 0o440,
              items: [{ key: 'password', path: 'db/password' }],
            },
          },
        ],
        containers: [
          {
            name: 'main',
            // Prints the ConfigMap's file, and whether the mounted Secret equals the env one
            // (never the value itself: the container's log is a file on the node too).
            command: [
              'sh',
              '-c',
              `while true; do echo "conf=$(cat ${mnt}/config/app.conf) same=$([ "$(cat ${mnt}/secret/db/password)" = "$PASSWORD" ] && echo yes || echo no) uid=$(id -u)"; sleep 0.3; done # ${MARKER}`,
            ],
            env: [{ name: 'PASSWORD', valueFrom: { secretKeyRef: { name: 'app-secret', key: 'password' } } }],
            volumeMounts: [
              { name: 'config', mountPath: `${mnt}/config` },
              { name: 'secret', mountPath: `${mnt}/secret`, readOnly: true },
            ],
          },
        ],
      },
    };
    await admin.create(pod);

    // The ConfigMap does not exist yet: ContainerCreating, and a FailedMount event says why.
    await eventually(async () => {
      const events = (await admin.list('Event', { namespace: 'default' })).items;
      return events.some(
        (e) =>
          e.reason === 'FailedMount' &&
          e.message === 'MountVolume.SetUp failed for volume "config" : configmap "app-config" not found',
      );
    }, 'a FailedMount event');
    expect((await getPod()).status?.containerStatuses?.[0]?.state?.waiting?.reason).toBe('ContainerCreating');

    await admin.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'app-config', namespace: 'default' },
      data: { 'app.conf': 'color=blue' },
    });
    const uid = (await getPod()).metadata!.uid!;
    await eventually(
      () => containerLog(uid).includes('conf=color=blue same=yes uid=65534'),
      'the container to read its mounted files',
      60_000,
    );
    expect((await getPod()).status?.phase).toBe('Running');

    // The files, as the agent keeps them: the kubelet's layout, modes and the pod's fsGroup.
    const volumes = join(dir, 'agent', 'volumes', uid);
    expect(statSync(join(dir, 'agent', 'volumes')).mode & 0o777).toBe(0o700);
    expect(readlinkSync(join(volumes, 'config', 'app.conf'))).toBe('..data/app.conf');
    const password = statSync(join(volumes, 'secret', 'db', 'password'));
    expect(password.mode & 0o777).toBe(0o440);
    expect(password.gid).toBe(4321);
    // Mounted for the container alone: the machine sees an empty mount point.
    expect(readdirSync(join(mnt, 'config'))).toEqual([]);

    // An update reaches the file within the sync period, through a new ..data version.
    const before = readlinkSync(join(volumes, 'config', '..data'));
    await admin.patch(
      'ConfigMap',
      'app-config',
      { data: { 'app.conf': 'color=green' } },
      { namespace: 'default' },
    );
    await eventually(
      () => containerLog(uid).includes('conf=color=green same=yes'),
      'the updated ConfigMap in the mounted file',
      30_000,
    );
    expect(readlinkSync(join(volumes, 'config', '..data'))).not.toBe(before);

    await admin.delete('Pod', 'app', { namespace: 'default', gracePeriodSeconds: 1 });
    await eventually(() => !existsSync(volumes), "the pod's volumes to be removed", 30_000);

    // The Secret's value is nowhere but in the process and its files.
    expectSecretNowhere(VALUE, [server.output(), ...(agentLogs.get(agent) ?? [])].join('\n'), server.dataDir);
  },
  150_000,
);

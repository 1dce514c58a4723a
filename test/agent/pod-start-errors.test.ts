/**
 * What a user reads when a container cannot start, with a real agent process on a real
 * control plane: a command that does not exist is a Warning `Failed` event (never `Started`)
 * and a StartError with the wrapper's exit code and what to do; an image whose runtime's
 * daemon is down says that daemon does not answer and how to start it, waits, and runs once
 * the daemon answers. The docker and podman the agent finds are small scripts standing in for
 * the real ones (first in its PATH), so the test does not depend on what this machine has.
 */
import type { ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Pod } from '../../client/api/types.js';
import type { Client } from '../../client/client.js';
import {
  createJoinToken,
  killAgent,
  killProcessesWith,
  shellPod,
  startAgentProcess,
  waitForNodeReady,
} from '../support/agentproc.js';
import { startTestControlPlane, type TestControlPlane } from '../support/controlplane.js';
import { eventually } from '../support/wait.js';

const NODE = 'lab-start-errors';
const MARKER = `kubelab-start-errors-${process.pid}`;
const DOCKER_DOWN =
  'Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?';

let t: TestControlPlane;
let admin: Client;
let dir: string;
let bin: string;
let agent: ChildProcess;

/** docker answers once `daemon-up` exists beside it; `docker run` then runs a loop as the container. */
function installFakeImageClis(): void {
  mkdirSync(bin);
  writeFileSync(
    join(bin, 'docker'),
    `#!/bin/sh
[ -e "${join(bin, 'daemon-up')}" ] || { echo "${DOCKER_DOWN}" >&2; exit 1; }
case "$1" in
  version) echo 27.0.0 ;;
  run) while true; do sleep 1; done ;;
esac
`,
  );
  writeFileSync(
    join(bin, 'podman'),
    '#!/bin/sh\necho "Cannot connect to Podman. Please verify your connection to the Linux system" >&2\nexit 125\n',
  );
  chmodSync(join(bin, 'docker'), 0o755);
  chmodSync(join(bin, 'podman'), 0o755);
}

beforeAll(async () => {
  t = await startTestControlPlane({ controllers: false });
  admin = t.client();
  dir = mkdtempSync(join(tmpdir(), 'kubelab-start-errors-'));
  bin = join(dir, 'bin');
  installFakeImageClis();
  agent = startAgentProcess({
    server: `127.0.0.1:${t.cp.port}`,
    dataDir: join(dir, 'agent'),
    nodeName: NODE,
    token: await createJoinToken(t),
    env: { ...process.env, PATH: `${bin}:/usr/bin:/bin` },
  });
  await waitForNodeReady(admin, NODE, agent);
}, 60_000);

afterAll(async () => {
  await killAgent(agent);
  killProcessesWith(MARKER);
  killProcessesWith(bin);
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

const get = (name: string) => admin.get('Pod', name, { namespace: 'default' });
const main = (p: Pod) => p.status!.containerStatuses![0];
const eventsOf = async (name: string) =>
  (await admin.list('Event', { namespace: 'default' })).items.filter((e) => e.involvedObject?.name === name);

it('a command that does not exist: a Warning Failed event, never Started, and StartError with exit code 127 and what to do', async () => {
  const missing = `kubelab-no-such-program-${process.pid}`;
  await admin.create(
    shellPod(
      'no-command',
      '',
      { node: NODE, marker: MARKER },
      { restartPolicy: 'Never' },
      { command: [missing] },
    ),
  );
  await eventually(async () => (await get('no-command')).status?.phase === 'Failed', 'the pod to fail');
  const terminated = main(await get('no-command')).state?.terminated;
  expect(terminated).toMatchObject({ exitCode: 127, reason: 'StartError' });
  expect(terminated?.message).toMatch(
    new RegExp(`"${missing}" was not found in PATH .*: install it on the node`),
  );

  await eventually(async () => (await eventsOf('no-command')).length > 0, 'its events');
  const events = await eventsOf('no-command');
  expect(events.map((e) => `${e.type} ${e.reason}`)).toContain('Warning Failed');
  expect(events.find((e) => e.reason === 'Failed')?.message).toBe(`Error: ${terminated?.message}`);
  expect(events.some((e) => e.reason === 'Started')).toBe(false);

  // Restarted by its policy: the reason and message stay in lastState while it backs off.
  await admin.create(
    shellPod('no-command-again', '', { node: NODE, marker: MARKER }, {}, { command: [missing] }),
  );
  await eventually(
    async () => main(await get('no-command-again')).state?.waiting?.reason === 'CrashLoopBackOff',
    'the back-off',
  );
  expect(main(await get('no-command-again')).lastState?.terminated).toMatchObject({
    exitCode: 127,
    reason: 'StartError',
    message: terminated?.message,
  });
});

it('an image whose runtime daemon is down: says it does not answer and how to start it, then runs once it answers', async () => {
  await admin.create<Pod>({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', namespace: 'default' },
    spec: { nodeName: NODE, containers: [{ name: 'main', image: 'nginx:1.27' }] },
  });
  await eventually(
    async () => main(await get('web')).state?.waiting?.reason === 'RunContainerError',
    'the container to wait with RunContainerError',
  );
  const web = await get('web');
  const message = main(web).state!.waiting!.message!;
  expect(message).toContain(`docker is installed but its daemon does not answer (${DOCKER_DOWN})`);
  expect(message).toContain('Start the daemon (sudo systemctl start docker)');
  expect(message).not.toContain('not installed');
  expect(web.status?.phase).toBe('Pending');
  await eventually(
    async () =>
      (await eventsOf('web')).some((e) => e.type === 'Warning' && e.message === `Error: ${message}`),
    'a Warning event with the same message',
  );

  // The user starts the daemon; the agent finds it at its next try (back-off: 10 s).
  writeFileSync(join(bin, 'daemon-up'), '');
  await eventually(async () => (await get('web')).status?.phase === 'Running', 'the pod to run', 25_000);
  expect(main(await get('web')).containerID).toMatch(/^docker:\/\//);
}, 60_000);

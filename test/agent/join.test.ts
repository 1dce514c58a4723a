/**
 * Two machines, one node name, as people meet it: a second `kubelab-agent` started under the
 * name of a live node is refused with a message that says what to do, the live node is left
 * alone, and `--force` takes the name over (the first machine's credential stops working).
 * Each agent keeps its node password beside its credential, 0600.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { credentialsPath, loadCredentials, nodePasswordPath } from '../../agent/credentials.js';
import type { Client } from '../../client/client.js';
import {
  agentLogs,
  createJoinToken,
  killAgent,
  startAgentProcess,
  waitForNodeReady,
} from '../support/agentproc.js';
import { startTestControlPlane, type TestControlPlane } from '../support/controlplane.js';
import { eventually } from '../support/wait.js';

let t: TestControlPlane;
let dir: string;
const children: ChildProcess[] = [];

beforeAll(async () => {
  t = await startTestControlPlane({ controllers: false });
  dir = mkdtempSync(join(tmpdir(), 'kubelab-agentjoin-'));
});
afterAll(async () => {
  for (const c of children) await killAgent(c);
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

function agent(dataDir: string, args: string[] = []): ChildProcess {
  const child = startAgentProcess({
    server: `127.0.0.1:${t.cp.port}`,
    dataDir,
    nodeName: 'twin',
    token: undefined,
    args,
  });
  children.push(child);
  return child;
}

async function exitOf(child: ChildProcess): Promise<{ code: number | null; stderr: string }> {
  if (child.exitCode === null && child.signalCode === null) await new Promise((r) => child.once('exit', r));
  return { code: child.exitCode, stderr: (agentLogs.get(child) ?? []).join('\n') };
}

/** A client with the credential an agent stored, giving up at once (a refusal shows as itself). */
function storedCredentialClient(dataDir: string): Client {
  const creds = loadCredentials(credentialsPath(dataDir))!;
  return t.client({ token: creds.token, retry: { attempts: 1 } });
}

it('refuses a second machine under a live node name, and --force takes the name over', async () => {
  const admin = t.client();
  const firstDir = join(dir, 'first');
  const secondDir = join(dir, 'second');

  const first = agent(firstDir, ['--token', await createJoinToken(t)]);
  await waitForNodeReady(admin, 'twin', first);
  expect(statSync(nodePasswordPath(firstDir)).mode & 0o777).toBe(0o600);

  const refused = agent(secondDir, ['--token', await createJoinToken(t)]);
  // It either gives up, or joins (and keeps running): whichever comes first.
  await eventually(
    () => refused.exitCode !== null || existsSync(credentialsPath(secondDir)),
    'the second agent to give up or join',
  );
  expect(existsSync(credentialsPath(secondDir)), 'the second machine joined under the live name').toBe(false);
  const { code, stderr } = await exitOf(refused);
  expect(code).toBe(1);
  expect(stderr).toContain('node "twin" is already joined by another machine');
  expect(stderr).toContain('labctl delete node twin');
  expect(stderr).toContain('--force');
  expect(existsSync(credentialsPath(secondDir))).toBe(false);
  // The live node was not disturbed: its credential still works.
  const firstCredential = storedCredentialClient(firstDir);
  expect((await firstCredential.get('Node', 'twin')).metadata?.name).toBe('twin');

  const forced = agent(secondDir, ['--token', await createJoinToken(t), '--force']);
  await eventually(() => {
    if (forced.exitCode !== null)
      throw new Error(`the forced agent exited: ${agentLogs.get(forced)?.join('\n')}`);
    return existsSync(credentialsPath(secondDir));
  }, 'the forced join');
  expect((await storedCredentialClient(secondDir).get('Node', 'twin')).metadata?.name).toBe('twin');
  await expect(firstCredential.get('Node', 'twin')).rejects.toMatchObject({ reason: 'Unauthorized' });
}, 120_000);

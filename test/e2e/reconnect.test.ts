/**
 * The GUI survives its server: `kubelab server --ui` runs as a child process with hollow
 * agents; the page (headless Chromium) shows the nodes; the server is killed (SIGKILL) and the
 * page says it is reconnecting. While the page is cut off, the cluster changes (through gRPC,
 * on the same data folder); when the server is back on the same ports the page, still signed
 * in and never reloaded, converges to the cluster as it now is, and keeps following it.
 * A screenshot of the reconnecting page goes to test-artifacts/reconnecting.png.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { defaultConfig } from '../../agent/config.js';
import { HollowFleet } from '../../agent/hollow.js';
import { quietLogger } from '../../agent/logger.js';
import type { Client } from '../../client/client.js';
import { TokensClient } from '../../client/grpc/cluster.js';
import { grpcClient } from '../../client/grpc/transport.js';
import { launchChromium } from '../support/chromium.js';
import { ARTIFACTS } from './support.js';

const ROOT = join(import.meta.dirname, '..', '..');
const BIN = join(ROOT, 'bin', 'kubelab.mjs');

/** One run of `kubelab server` on the test's data folder. */
interface Server {
  child: ChildProcess;
  grpcPort: number;
  guiUrl?: string;
  exited: Promise<number | null>;
  client: Client;
}

let dataDir: string;
let browser: Browser;
let page: Page;
let fleet: HollowFleet | undefined;
const servers: Server[] = [];

async function startServer(listen: string, uiListen?: string): Promise<Server> {
  const child = spawn(
    process.execPath,
    [
      BIN,
      'server',
      '--data-dir',
      dataDir,
      '--listen',
      listen,
      // The GUI is the subject here: no controller should change the nodes under it.
      '--no-controller-manager',
      '--metrics-listen',
      '127.0.0.1:0',
      '--log-level',
      'warn',
      ...(uiListen ? ['--ui-listen', uiListen] : []),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const out = { stdout: '', stderr: '' };
  child.stdout!.on('data', (d: Buffer) => (out.stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out.stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await expect
    .poll(
      () => {
        if (child.exitCode !== null) throw new Error(`kubelab server exited: ${out.stderr}`);
        return out.stdout.includes('Stop with Ctrl-C.');
      },
      { timeout: 60_000, interval: 50 },
    )
    .toBe(true);
  const grpcPort = Number(/listening on\s+127\.0\.0\.1:(\d+) /.exec(out.stdout)![1]);
  const guiUrl = /^GUI: (\S+)$/m.exec(out.stdout)?.[1];
  const client = grpcClient({
    server: `127.0.0.1:${grpcPort}`,
    caPem: readFileSync(join(dataDir, 'pki', 'ca.crt'), 'utf8'),
    token: readFileSync(join(dataDir, 'admin.token'), 'utf8').trim(),
  });
  const server = { child, grpcPort, guiUrl, exited, client };
  servers.push(server);
  return server;
}

async function stopServer(server: Server, signal: NodeJS.Signals): Promise<number | null> {
  server.client.close();
  server.child.kill(signal);
  return server.exited;
}

const text = (selector: string) => page.locator(selector).innerText();
const nodeRows = () =>
  page.locator('[data-node]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-node')).sort());
const statusOf = (name: string) => text(`[data-node="${name}"] [data-col="status"]`);

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'kubelab-reconnect-'));
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await fleet?.stop();
  for (const s of servers) {
    s.client.close();
    if (s.child.exitCode === null && s.child.signalCode === null) {
      s.child.kill('SIGKILL');
      await s.exited;
    }
  }
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
}, 60_000);

it('shows reconnecting while the server is gone, then converges without a reload', async () => {
  // The first server, with agents and a node without one.
  const first = await startServer('127.0.0.1:0', '127.0.0.1:0');
  const uiPort = Number(new URL(first.guiUrl!).port);
  const tokens = new TokensClient({
    server: `127.0.0.1:${first.grpcPort}`,
    token: readFileSync(join(dataDir, 'admin.token'), 'utf8').trim(),
    caPem: readFileSync(join(dataDir, 'pki', 'ca.crt'), 'utf8'),
  });
  const joinToken = (await tokens.create()).token!;
  tokens.close();
  fleet = new HollowFleet({
    count: 2,
    prefix: 'rc',
    servers: [`https://127.0.0.1:${first.grpcPort}`],
    dataDir: join(dataDir, 'agents'),
    joinToken,
    config: (name) => defaultConfig(name),
    logger: quietLogger(),
    spreadMs: 10,
  });
  await fleet.start();
  await first.client.create({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'gone' } });

  await page.goto(first.guiUrl!);
  await page.click('[data-view="nodes"]');
  await expect.poll(nodeRows, { timeout: 30_000 }).toEqual(['gone', 'rc-0', 'rc-1']);
  await expect.poll(() => statusOf('rc-0'), { timeout: 30_000 }).toBe('Ready');
  await page.evaluate(() => ((window as unknown as { notReloaded: boolean }).notReloaded = true));

  // Killed: no goodbye, no close frame.
  expect(await stopServer(first, 'SIGKILL')).toBeNull();
  await expect.poll(() => text('[data-testid="connection"]'), { timeout: 15_000 }).toContain('Reconnecting');
  await expect.poll(() => text('[data-testid="live-state"]')).toContain('Reconnecting');
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, 'reconnecting.png'), fullPage: true });

  // The cluster changes while the page cannot see it: a server without the GUI, same data.
  const second = await startServer(`127.0.0.1:${first.grpcPort}`);
  await second.client.delete('Node', 'gone');
  await second.client.create({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'appeared' } });
  await second.client.patch('Node', 'rc-0', { spec: { unschedulable: true } });
  expect(await nodeRows()).toEqual(['gone', 'rc-0', 'rc-1']);
  expect(await text('[data-testid="connection"]')).toContain('Reconnecting');
  expect(await stopServer(second, 'SIGTERM')).toBe(0);

  // Back with the GUI on the same ports: the page signs in by itself and catches up.
  const third = await startServer(`127.0.0.1:${first.grpcPort}`, `127.0.0.1:${uiPort}`);
  await expect.poll(nodeRows, { timeout: 30_000 }).toEqual(['appeared', 'rc-0', 'rc-1']);
  await expect.poll(() => statusOf('rc-0'), { timeout: 30_000 }).toBe('Ready,SchedulingDisabled');
  await expect.poll(() => page.locator('[data-testid="connection"]').count(), { timeout: 30_000 }).toBe(0);
  expect(await text('[data-testid="live-state"]')).toContain('Live');
  expect(await page.locator('[data-testid="signed-out"]').count()).toBe(0);
  expect(await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded)).toBe(true);

  // And it follows the cluster again, live.
  await third.client.delete('Node', 'appeared');
  await expect.poll(nodeRows, { timeout: 15_000 }).toEqual(['rc-0', 'rc-1']);
  await expect.poll(() => statusOf('rc-1'), { timeout: 30_000 }).toBe('Ready');
}, 180_000);

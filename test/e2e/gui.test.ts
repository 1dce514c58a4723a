/**
 * The GUI in headless Chromium (Debian's, driven by playwright-core) against browser mode on a
 * real control plane with hollow agents: what a user sees, live, without reloading — a node
 * that joins appears Ready; applying a DaemonSet shows its pods; cordon marks the node; an
 * invalid manifest shows the field at fault; a pod's log streams into the viewer. Screenshots
 * go to test-artifacts/.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { defaultConfig } from '../../agent/config.js';
import { HollowFleet } from '../../agent/hollow.js';
import { quietLogger } from '../../agent/logger.js';
import type { Client } from '../../client/client.js';
import { startUiServer, type UiServer } from '../../main/bridge/websocket.js';
import { createJoinToken } from '../support/agentproc.js';
import { startTestControlPlane, type TestControlPlane } from '../support/controlplane.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARTIFACTS = join(import.meta.dirname, '..', '..', 'test-artifacts');

let t: TestControlPlane;
let admin: Client;
let ui: UiServer;
let browser: Browser;
let page: Page;
let dir: string;
const fleets: HollowFleet[] = [];

async function startFleet(prefix: string, count: number): Promise<void> {
  const fleet = new HollowFleet({
    count,
    prefix,
    servers: [`https://127.0.0.1:${t.cp.port}`],
    dataDir: join(dir, prefix),
    joinToken: await createJoinToken(t),
    config: (name) => defaultConfig(name),
    logger: quietLogger(),
    spreadMs: 10,
  });
  fleets.push(fleet);
  await fleet.start();
}

async function shot(name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `no Chromium at ${CHROMIUM}: install Debian's chromium (apt-get install chromium) or set CHROMIUM_PATH`,
    );
  }
  if (!existsSync(join(import.meta.dirname, '..', '..', 'out', 'renderer', 'index.html'))) {
    throw new Error('the GUI is not built: run `npx electron-vite build` (npm test does) first');
  }
  t = await startTestControlPlane();
  admin = t.client();
  dir = mkdtempSync(join(tmpdir(), 'kubelab-e2e-'));
  ui = await startUiServer({ controlPlane: t.cp, listen: '127.0.0.1:0' });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await page.goto(ui.url(t.cp.adminToken));
  await page.waitForSelector('[data-testid="nodes-ready"]');
}, 60_000);

afterAll(async () => {
  await browser?.close();
  for (const f of fleets) await f.stop();
  await ui?.close();
  await t?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const text = (selector: string) => page.locator(selector).innerText();

it('a joining node appears Ready without a reload', async () => {
  await expect.poll(() => text('[data-testid="nodes-ready"]')).toContain('0/0');
  await startFleet('gui', 2);
  await expect.poll(() => text('[data-testid="nodes-ready"]'), { timeout: 20_000 }).toContain('2/2');
  await page.click('[data-view="nodes"]');
  await expect.poll(() => text('[data-node="gui-0"] [data-col="status"]'), { timeout: 20_000 }).toBe('Ready');
  await shot('nodes');
}, 60_000);

it('applying a DaemonSet shows its pods appear', async () => {
  await page.click('[data-view="apply"]');
  await page.fill(
    '[data-testid="manifest"]',
    `apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: exporter
  namespace: default
spec:
  selector:
    matchLabels: { app: exporter }
  template:
    metadata:
      labels: { app: exporter }
    spec:
      containers:
        - name: exporter
          image: prom/node-exporter
`,
  );
  await page.click('[data-testid="apply"]');
  await expect.poll(() => text('[data-testid="apply-result"]')).toContain('DaemonSet/exporter');
  await page.click('[data-view="daemonsets"]');
  await expect
    .poll(() => text('[data-daemonset="exporter"] [data-col="ready"]'), { timeout: 30_000 })
    .toBe('2');
  await page.click('[data-view="pods"]');
  await expect.poll(async () => page.locator('[data-pod^="exporter-"]').count(), { timeout: 30_000 }).toBe(2);
  await shot('pods');
}, 60_000);

it('cordon marks the node unschedulable', async () => {
  await page.click('[data-view="nodes"]');
  await page.click('[data-node="gui-1"] button:has-text("Cordon")');
  await expect
    .poll(() => text('[data-node="gui-1"] [data-col="status"]'), { timeout: 10_000 })
    .toBe('Ready,SchedulingDisabled');
  expect((await admin.get('Node', 'gui-1')).spec?.unschedulable).toBe(true);
}, 30_000);

it('an invalid manifest shows the field at fault', async () => {
  await page.click('[data-view="apply"]');
  await page.fill(
    '[data-testid="manifest"]',
    `apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: broken
  namespace: default
spec:
  selector:
    matchLabels: { app: one }
  template:
    metadata:
      labels: { app: other }
    spec:
      containers:
        - name: c
          image: x
`,
  );
  await page.click('[data-testid="apply"]');
  await expect.poll(() => text('[data-testid="apply-error"]')).toContain('spec.template.metadata.labels');
  await shot('apply-error');
}, 30_000);

it("streams a pod's log into the viewer", async () => {
  await page.click('[data-view="pods"]');
  const row = page.locator('[data-pod^="exporter-"]').first();
  await row.locator('button:has-text("Logs")').click();
  await expect
    .poll(() => text('[data-testid="logs"] pre'), { timeout: 15_000 })
    .toContain('hollow container exporter started');
  await shot('logs');
}, 30_000);

it('Add node: the token the GUI makes joins a machine, which appears live', async () => {
  await page.click('[data-view="addnode"]');
  await page.click('[data-testid="new-token"]');
  const line = await page.locator('[data-testid="join-commands"] code').first().innerText();
  const token = /--token '([^']+)'/.exec(line)?.[1];
  expect(token).toMatch(/^K10[0-9a-f]{64}::/);
  expect(line).toContain(`:${t.cp.port} `);
  const fleet = new HollowFleet({
    count: 1,
    prefix: 'added',
    servers: [`https://127.0.0.1:${t.cp.port}`],
    dataDir: join(dir, 'added'),
    joinToken: token,
    config: (name) => defaultConfig(name),
    logger: quietLogger(),
  });
  fleets.push(fleet);
  await fleet.start();
  await expect.poll(() => text('[data-testid="joined"]'), { timeout: 20_000 }).toBe('added-0 joined');
  await shot('add-node');
}, 30_000);

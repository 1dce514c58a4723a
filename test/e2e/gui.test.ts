/**
 * The GUI in headless Chromium (Debian's, driven by playwright-core) against browser mode on a
 * real control plane with hollow agents: what a user sees, live, without reloading — a node
 * that joins appears Ready; applying a DaemonSet shows its pods; cordon marks the node; an
 * invalid manifest shows the field at fault; a pod's log streams into the viewer; the tables
 * sort and answer the keyboard; Add node warns that a loopback-only server is out of other
 * machines' reach and fits 1,280 px; Settings shows the server and manages tokens; the theme
 * follows the system unless chosen. Screenshots go to test-artifacts/.
 */
import { HollowFleet } from '../../agent/hollow.js';
import { defaultConfig } from '../../agent/config.js';
import { quietLogger } from '../../agent/logger.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { fillEditor, startGui, type Gui } from './support.js';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

let gui: Gui;
const addedDir = mkdtempSync(join(tmpdir(), 'kubelab-e2e-added-'));
let added: HollowFleet | undefined;

beforeAll(async () => {
  gui = await startGui();
}, 60_000);

afterAll(async () => {
  await added?.stop();
  await gui?.close();
  rmSync(addedDir, { recursive: true, force: true });
});

it('a joining node appears Ready without a reload', async () => {
  const { page, text } = gui;
  await expect.poll(() => text('[data-testid="nodes-ready"]')).toContain('0/0');
  await gui.startFleet('gui', 2);
  await expect.poll(() => text('[data-testid="nodes-ready"]'), { timeout: 20_000 }).toContain('2/2');
  await page.click('[data-view="nodes"]');
  await expect.poll(() => text('[data-node="gui-0"] [data-col="status"]'), { timeout: 20_000 }).toBe('Ready');
  await gui.shot('nodes');
}, 60_000);

it('applying a DaemonSet shows its pods appear', async () => {
  const { page, text } = gui;
  await page.click('[data-view="apply"]');
  await fillEditor(
    page,
    'manifest',
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
  await gui.shot('pods');
}, 60_000);

it('cordon marks the node unschedulable', async () => {
  const { page, text } = gui;
  await page.click('[data-view="nodes"]');
  await page.click('[data-node="gui-1"] button:has-text("Cordon")');
  await expect
    .poll(() => text('[data-node="gui-1"] [data-col="status"]'), { timeout: 10_000 })
    .toBe('Ready,SchedulingDisabled');
  expect((await gui.admin.get('Node', 'gui-1')).spec?.unschedulable).toBe(true);
}, 30_000);

it('the nodes table sorts by a column and answers the keyboard', async () => {
  const { page } = gui;
  await page.click('[data-view="nodes"]');
  const names = () =>
    page
      .locator('[data-testid="nodes"] [data-node]')
      .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-node')));
  await expect.poll(names).toEqual(['gui-0', 'gui-1']);
  await page.click('[data-sort="name"]');
  await expect.poll(names).toEqual(['gui-1', 'gui-0']);
  await page.click('[data-sort="status"]');
  // Ready sorts before Ready,SchedulingDisabled.
  await expect.poll(names).toEqual(['gui-0', 'gui-1']);

  await page.keyboard.press('/');
  await page.keyboard.type('gui-1');
  await expect.poll(names).toEqual(['gui-1']);
  await expect.poll(() => gui.text('[data-testid="nodes"] [data-testid="row-count"]')).toBe('1 of 2');
  await page.keyboard.press('Escape');
  await page.keyboard.press('j');
  await expect.poll(() => page.locator('[data-node="gui-1"]').getAttribute('aria-selected')).toBe('true');
  await page.keyboard.press('Enter');
  await expect.poll(() => gui.text('[data-testid="node-page"] h2')).toContain('gui-1');
  expect(page.url()).toContain('#node/gui-1');
}, 30_000);

it('an invalid manifest shows the field at fault', async () => {
  const { page, text } = gui;
  await page.click('[data-view="apply"]');
  await fillEditor(
    page,
    'manifest',
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
  // In the editor, the message sits under the line of the field at fault.
  const marked = page.locator('[data-testid="manifest"] .cm-error-line');
  await expect.poll(() => marked.first().innerText()).toContain('labels: { app: other }');
  await expect
    .poll(() => text('[data-testid="manifest"] [data-field="spec.template.metadata.labels"]'))
    .toContain('selector');
  await gui.shot('apply-error');
}, 30_000);

it("streams a pod's log into the viewer", async () => {
  const { page, text } = gui;
  await page.click('[data-view="pods"]');
  const row = page.locator('[data-pod^="exporter-"]').first();
  await row.locator('button:has-text("Logs")').click();
  await expect
    .poll(() => text('[data-testid="logs"] pre'), { timeout: 15_000 })
    .toContain('hollow container exporter started');
  await gui.shot('logs');
}, 30_000);

it('Add node: warns that a loopback-only server is out of reach, fits 1,280 px, and its token joins a machine', async () => {
  const { page, text, t } = gui;
  expect(page.viewportSize()?.width).toBe(1280);
  await page.click('[data-view="addnode"]');
  // The test server listens on 127.0.0.1 only: the page says so before a token is made.
  const warning = await page.locator('[data-testid="loopback-warning"]').innerText();
  expect(warning).toContain('Other machines cannot reach this control plane');
  expect(warning).toContain(`kubelab server --listen 0.0.0.0:${t.cp.port}`);
  expect(warning).toContain('--tls-san');
  await page.click('[data-testid="new-token"]');
  // The token is minted by the control plane: the commands appear when it answers.
  const commands = page.locator('[data-testid="join-commands"] code');
  await expect
    .poll(async () => (await commands.allInnerTexts()).some((l) => l.includes('kubelab-agent --server')))
    .toBe(true);
  const lines = await commands.allInnerTexts();
  // No LAN address that the server does not answer on: the address it listens on.
  for (const line of lines) expect(line).toContain(`https://127.0.0.1:${t.cp.port}`);
  // The agent takes the token from its environment, where `ps` does not show it.
  const foreground = lines.find((l) => l.includes('kubelab-agent --server'))!;
  expect(foreground).not.toContain('--token');
  const token = /^KUBELAB_TOKEN='([^']+)' kubelab-agent --server /.exec(foreground)?.[1];
  expect(token).toMatch(/^K10[0-9a-f]{64}::/);
  // The long commands wrap inside their boxes: nothing runs off the page or its scroller.
  const overflow = await page.evaluate(() => {
    const page = document.documentElement;
    const main = document.querySelector('main')!;
    return { page: page.scrollWidth - page.clientWidth, main: main.scrollWidth - main.clientWidth };
  });
  expect(overflow).toEqual({ page: 0, main: 0 });
  added = new HollowFleet({
    count: 1,
    prefix: 'added',
    servers: [`https://127.0.0.1:${t.cp.port}`],
    dataDir: addedDir,
    joinToken: token,
    config: (name) => defaultConfig(name),
    logger: quietLogger(),
  });
  await added.start();
  await expect.poll(() => text('[data-testid="joined"]'), { timeout: 20_000 }).toBe('added-0 joined');
  await gui.shot('add-node');
}, 30_000);

it('Settings shows how the server runs and manages tokens', async () => {
  const { page, text, t } = gui;
  await page.click('[data-view="settings"]');
  await expect.poll(() => text('[data-info="store"]')).toContain('SQLite');
  expect(await text('[data-info="dataDir"]')).toBe(t.dataDir);
  expect(await text('[data-info="listen"]')).toContain(`:${t.cp.port}`);
  expect(await text('[data-info="ui"]')).toBe(`http://127.0.0.1:${gui.ui.port}`);

  // A viewer kubeconfig, as a user copies it for kubectl on another machine.
  await page.selectOption('select[name="kubeconfig-role"]', 'viewer');
  await page.click('[data-testid="kubeconfig"] button[type="submit"]');
  await expect.poll(() => text('[data-testid="kubeconfig-note"]')).toContain('a viewer kubeconfig');
  const kubeconfig = join(mkdtempSync(join(tmpdir(), 'gui-kubeconfig-')), 'config');
  writeFileSync(kubeconfig, await page.locator('[data-testid="kubeconfig-text"]').innerText());
  const kubectl = (args: string[]) =>
    run(join(import.meta.dirname, '..', '..', '.cache', 'kubectl', '1.33', 'kubectl'), args, {
      env: { PATH: process.env.PATH, HOME: dirname(kubeconfig), KUBECONFIG: kubeconfig },
    });
  expect((await kubectl(['get', 'namespace', 'default', '-o', 'name'])).stdout).toBe('namespace/default\n');
  await expect(kubectl(['create', 'namespace', 'from-gui'])).rejects.toMatchObject({
    stderr: expect.stringContaining('the viewer role may only get, list and watch'),
  });
  rmSync(dirname(kubeconfig), { recursive: true, force: true });

  await page.fill('input[name="ttl"]', 'soon');
  await page.click('[data-testid="new-token-form"] button[type="submit"]');
  await expect.poll(() => text('[data-testid="ttl-error"]')).toContain('24h');

  await page.selectOption('select[name="role"]', 'viewer');
  await page.fill('input[name="token-name"]', 'alice');
  await page.fill('input[name="ttl"]', '2h');
  await page.click('[data-testid="new-token-form"] button[type="submit"]');
  const secret = (await page.locator('[data-testid="created-token"] .secret code').innerText()).trim();
  const identity = t.cp.tokens.authenticate(secret);
  const id = secret.split('.')[0];
  expect(identity).toEqual({ name: 'alice', role: 'viewer', tokenId: id });
  await expect.poll(() => text(`[data-token="${id}"]`)).toMatch(/viewer\s+alice/);
  expect(await text(`[data-token="${id}"]`)).toContain('in 2h');

  await page.click(`[data-token="${id}"] button`);
  await page.click(`[data-token="${id}"] button:has-text("Really delete?")`);
  await expect.poll(() => page.locator(`[data-token="${id}"]`).count()).toBe(0);
  expect(t.cp.tokens.authenticate(secret)).toBeUndefined();
  await gui.shot('settings');
}, 30_000);

it('the theme follows the system unless chosen in Settings, and the choice survives a reload', async () => {
  const { page } = gui;
  const theme = () => page.evaluate(() => document.documentElement.dataset.theme);
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.click('[data-view="settings"]');
  await page.check('[data-theme-choice="system"]');
  await expect.poll(theme).toBe('dark');
  await page.emulateMedia({ colorScheme: 'light' });
  await expect.poll(theme).toBe('light');
  await page.check('[data-theme-choice="dark"]');
  await expect.poll(theme).toBe('dark');
  await page.click('[data-view="overview"]');
  await expect.poll(() => gui.text('[data-testid="nodes-ready"]')).toContain('3/3');
  await gui.shot('overview-dark');
  await page.reload();
  await page.waitForSelector('[data-testid="nodes-ready"]');
  expect(await theme()).toBe('dark');
  await page.click('[data-view="settings"]');
  await page.check('[data-theme-choice="system"]');
  await expect.poll(theme).toBe('light');
}, 30_000);

/**
 * ConfigMaps and Secrets in headless Chromium against browser mode on a real control plane: a
 * ConfigMap and a Secret made through the API show in their lists; the ConfigMap's page shows
 * its values (a binary one by size only) and saves an edit made in the YAML editor; the
 * Secret's page shows key names and sizes with every value hidden until an admin reveals one,
 * hides it again on leaving the page, and never puts it in the address or the console; a
 * viewer signed in with a viewer token is told why the values are hidden, has no Reveal, and
 * the value reaches neither its page nor its WebSocket. Screenshots go to test-artifacts/.
 */
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { ConfigMap, Secret } from '../../client/api/types.js';
import { ARTIFACTS, fillEditor, startGui, type Gui } from './support.js';

let gui: Gui;
const b64 = (value: string | Uint8Array) => Buffer.from(value).toString('base64');
const PASSWORD = 'correct-horse-battery-staple';
const USERNAME = 'lab-operator';
/** Every form in which the password could leak. */
const LEAKS = [PASSWORD, b64(PASSWORD), USERNAME, b64(USERNAME)];
/** What the pages wrote to their consoles. */
const consoleLines: string[] = [];

beforeAll(async () => {
  gui = await startGui();
  gui.page.on('console', (m) => consoleLines.push(m.text()));
  await gui.admin.create<ConfigMap>({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'app-config', namespace: 'default', labels: { app: 'web' } },
    data: { greeting: 'hello from a ConfigMap', 'app.yaml': 'port: 8080\nlog: debug\n' },
    binaryData: { 'logo.png': b64(new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01])) },
  });
  await gui.admin.create<Secret>({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'db-credentials', namespace: 'default' },
    type: 'kubernetes.io/basic-auth',
    data: { username: b64(USERNAME), password: b64(PASSWORD) },
  });
}, 90_000);

afterAll(async () => {
  await gui?.close();
});

/** The page's whole document, attributes included. */
async function expectNoLeak(page: Page): Promise<void> {
  const html = await page.content();
  for (const leak of LEAKS) expect(html).not.toContain(leak);
  expect(page.url()).not.toContain(PASSWORD);
}

it('lists the ConfigMap, shows its values, and saves an edit made as YAML', async () => {
  const { page, text, admin } = gui;
  await page.click('[data-view="configmaps"]');
  await expect.poll(() => text('[data-configmap="app-config"] [data-col="data"]')).toBe('3');
  expect(await text('[data-configmap="app-config"] [data-col="namespace"]')).toBe('default');
  expect(await text('[data-configmap="app-config"] [data-col="age"]')).toMatch(/^\d+[smhd]$/);
  await gui.shot('configmaps');

  await page.click('[data-configmap="app-config"] [data-col="name"] button');
  await expect.poll(() => text('[data-testid="configmap-page"] h2')).toContain('app-config');
  expect(await text('[data-key="greeting"] [data-col="value"]')).toBe('hello from a ConfigMap');
  expect(await text('[data-key="greeting"] [data-col="size"]')).toBe('22 bytes');
  expect(await text('[data-key="app.yaml"] [data-col="value"]')).toBe('port: 8080\nlog: debug\n');
  expect(await text('[data-key="logo.png"] [data-col="size"]')).toBe('6 bytes');
  expect(await text('[data-key="logo.png"] [data-col="value"]')).toContain('not shown');
  expect(await text('[data-fact="keys"]')).toBe('3');
  await gui.shot('configmap');

  const current = await admin.get('ConfigMap', 'app-config', { namespace: 'default' });
  const { status: _none, ...edited } = {
    ...current,
    data: { ...current.data, greeting: 'edited in the GUI' },
  } as ConfigMap & { status?: unknown };
  await page.click('[data-testid="edit"]');
  await page.waitForSelector('[data-testid="edit-yaml"] .cm-content');
  await fillEditor(page, 'edit-yaml', stringify(edited));
  await page.click('[data-testid="save"]');
  await expect
    .poll(async () => (await admin.get('ConfigMap', 'app-config', { namespace: 'default' })).data?.greeting)
    .toBe('edited in the GUI');
  await expect.poll(() => text('[data-key="greeting"] [data-col="value"]')).toBe('edited in the GUI');
}, 60_000);

it('hides Secret values until an admin reveals one, and hides it again on leaving', async () => {
  const { page, text } = gui;
  await page.click('[data-view="secrets"]');
  const row = '[data-secret="db-credentials"]';
  await expect.poll(() => text(`${row} [data-col="type"]`)).toBe('kubernetes.io/basic-auth');
  expect(await text(`${row} [data-col="data"]`)).toBe('2');
  expect(await text(`${row} [data-col="namespace"]`)).toBe('default');
  await expectNoLeak(page);
  await gui.shot('secrets');

  await page.click(`${row} [data-col="name"] button`);
  await expect.poll(() => text('[data-testid="secret-page"] h2')).toContain('db-credentials');
  expect(await text('[data-fact="type"]')).toBe('kubernetes.io/basic-auth');
  expect(await text('[data-key="password"] [data-col="size"]')).toBe(`${PASSWORD.length} bytes`);
  expect(await text('[data-key="username"] [data-col="size"]')).toBe(`${USERNAME.length} bytes`);
  await page.waitForSelector('[data-key="password"] [data-testid="reveal"]');
  expect(await page.locator('[data-testid="revealed"]').count()).toBe(0);
  await expectNoLeak(page);

  await page.click('[data-key="password"] [data-testid="reveal"]');
  await expect.poll(() => text('[data-key="password"] [data-testid="revealed"]')).toBe(PASSWORD);
  // Only the key asked for: the other stays hidden.
  expect(await page.locator('[data-key="username"] [data-testid="reveal"]').count()).toBe(1);
  expect(await page.content()).not.toContain(USERNAME);
  expect(page.url()).not.toContain(PASSWORD);
  await gui.shot('secret-revealed');

  await page.click('[data-key="password"] [data-testid="hide"]');
  await expect.poll(() => page.locator('[data-testid="revealed"]').count()).toBe(0);
  await expectNoLeak(page);

  // Revealed, then away and back: hidden again.
  await page.click('[data-key="password"] [data-testid="reveal"]');
  await expect.poll(() => text('[data-key="password"] [data-testid="revealed"]')).toBe(PASSWORD);
  await page.click('[data-testid="secret-page"] .crumbs button');
  await page.waitForSelector(`${row} [data-col="name"] button`);
  await expectNoLeak(page);
  await page.click(`${row} [data-col="name"] button`);
  await page.waitForSelector('[data-key="password"] [data-testid="reveal"]');
  expect(await page.locator('[data-testid="revealed"]').count()).toBe(0);
  await expectNoLeak(page);
  for (const leak of LEAKS) expect(consoleLines.join('\n')).not.toContain(leak);
}, 60_000);

it('tells a viewer why Secret values are hidden, and never sends them one', async () => {
  const browser = gui.page.context().browser()!;
  // A page of its own (its own cookies), signed in with a viewer token.
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const frames: string[] = [];
  const lines: string[] = [];
  page.on('console', (m) => lines.push(m.text()));
  page.on('websocket', (ws) => ws.on('framereceived', (f) => frames.push(String(f.payload))));
  try {
    await page.goto(gui.ui.url(gui.t.tokenFor('viewer', 'vera')));
    await page.waitForSelector('[data-testid="nodes-ready"]');
    const text = (selector: string) => page.locator(selector).first().innerText();

    await page.click('[data-view="secrets"]');
    const row = '[data-secret="db-credentials"]';
    await expect.poll(() => text(`${row} [data-col="data"]`)).toBe('2');
    await page.click(`${row} [data-col="name"] button`);
    await expect.poll(() => text('[data-testid="secret-page"] h2')).toContain('db-credentials');
    for (const key of ['password', 'username']) {
      await expect
        .poll(() => text(`[data-key="${key}"] [data-testid="hidden"]`))
        .toBe('hidden: your role (viewer) cannot read Secret values');
      expect(await text(`[data-key="${key}"] [data-col="size"]`)).toBe('hidden');
    }
    expect(await page.locator('[data-testid="reveal"]').count()).toBe(0);
    expect(await page.locator('[data-testid="edit"]').count()).toBe(0);
    await expectNoLeak(page);
    await page.screenshot({ path: join(ARTIFACTS, 'secret-viewer.png'), fullPage: true });

    // ConfigMaps are not secret: a viewer reads them.
    await page.click('[data-view="configmaps"]');
    await page.click('[data-configmap="app-config"] [data-col="name"] button');
    await expect.poll(() => text('[data-key="app.yaml"] [data-col="value"]')).toContain('port: 8080');

    expect(frames.length).toBeGreaterThan(0);
    for (const leak of LEAKS) {
      expect(frames.join('\n')).not.toContain(leak);
      expect(lines.join('\n')).not.toContain(leak);
    }
  } finally {
    await page.close();
  }
}, 60_000);

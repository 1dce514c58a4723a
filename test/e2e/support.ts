/**
 * What the GUI's end-to-end tests share: a real control plane on loopback with browser mode
 * (`kubelab server --ui`), Debian's Chromium driven by playwright-core and signed in through
 * the printed link, hollow agent fleets that join with real join tokens, screenshots to
 * test-artifacts/, and a way to type into the CodeMirror editors.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { defaultConfig, type AgentConfig } from '../../agent/config.js';
import { HollowFleet } from '../../agent/hollow.js';
import { quietLogger } from '../../agent/logger.js';
import type { Client } from '../../client/client.js';
import { startUiServer, type UiServer } from '../../main/bridge/websocket.js';
import { createJoinToken } from '../support/agentproc.js';
import { launchChromium } from '../support/chromium.js';
import { startTestControlPlane, type TestControlPlane } from '../support/controlplane.js';

export const ARTIFACTS = join(import.meta.dirname, '..', '..', 'test-artifacts');

export interface FleetOptions {
  /** Agent settings beyond the defaults, e.g. a short metricsMs. */
  config?: Partial<AgentConfig>;
  /** Join with this token instead of a fresh one. */
  joinToken?: string;
}

export interface Gui {
  t: TestControlPlane;
  admin: Client;
  ui: UiServer;
  page: Page;
  /** Starts `count` hollow nodes named <prefix>-0…, joined with a fresh join token. */
  startFleet(prefix: string, count: number, options?: FleetOptions): Promise<HollowFleet>;
  /** A full-page screenshot in test-artifacts/<name>.png. */
  shot(name: string): Promise<void>;
  /** The visible text of the first element matching `selector`. */
  text(selector: string): Promise<string>;
  close(): Promise<void>;
}

export async function startGui(): Promise<Gui> {
  const t = await startTestControlPlane();
  const dir = mkdtempSync(join(tmpdir(), 'kubelab-e2e-'));
  const fleets: HollowFleet[] = [];
  let ui: UiServer | undefined;
  let browser: Browser | undefined;
  const close = async () => {
    await browser?.close();
    for (const f of fleets) await f.stop();
    await ui?.close();
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    ui = await startUiServer({ controlPlane: t.cp, listen: '127.0.0.1:0' });
    browser = await launchChromium();
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(ui.url(t.cp.adminToken));
    await page.waitForSelector('[data-testid="nodes-ready"]');
    const server = ui;
    return {
      t,
      admin: t.client(),
      ui: server,
      page,
      async startFleet(prefix, count, options = {}) {
        const fleet = new HollowFleet({
          count,
          prefix,
          servers: [`https://127.0.0.1:${t.cp.port}`],
          dataDir: join(dir, prefix),
          joinToken: options.joinToken ?? (await createJoinToken(t)),
          config: (name) => ({ ...defaultConfig(name), ...options.config }),
          logger: quietLogger(),
          spreadMs: 10,
        });
        fleets.push(fleet);
        await fleet.start();
        return fleet;
      },
      async shot(name) {
        mkdirSync(ARTIFACTS, { recursive: true });
        await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
      },
      text: (selector) => page.locator(selector).first().innerText(),
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

/** Replaces the text of the CodeMirror editor marked data-testid=`testid`, as typing would. */
export async function fillEditor(page: Page, testid: string, text: string): Promise<void> {
  const content = page.locator(`[data-testid="${testid}"] .cm-content`);
  await content.click();
  await page.keyboard.press('ControlOrMeta+a');
  await page.keyboard.press('Delete');
  // insertText is one input event: no auto-indent or bracket closing on the way, like a paste.
  await page.keyboard.insertText(text);
}

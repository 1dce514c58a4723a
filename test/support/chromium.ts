/**
 * Debian's headless Chromium as the GUI's end-to-end tests and bench:gui drive it: one path,
 * one set of flags, so the benchmark's figures are for the GUI the tests see.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const RENDERER_INDEX = join(import.meta.dirname, '..', '..', 'out', 'renderer', 'index.html');

const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Fails early, with what to do, when Chromium or the built GUI is missing. */
export function checkChromiumAndGui(): void {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `no Chromium at ${CHROMIUM}: install Debian's chromium (apt-get install chromium) or set CHROMIUM_PATH`,
    );
  }
  if (!existsSync(RENDERER_INDEX)) {
    throw new Error(
      'the GUI is not built (no out/renderer/index.html): run `npx electron-vite build` (npm test does) first',
    );
  }
}

/** Debian's headless Chromium, after checking that it and the built GUI are there. */
export async function launchChromium(): Promise<Browser> {
  checkChromiumAndGui();
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}

/**
 * Where the shell's images are (made by build/make-icons.mjs). This file (main/shell/) and the
 * bundle electron-vite makes of it (out/main/index.js) both sit two folders below the project
 * root, so one relative path serves the tests, `npm start` and the packaged app (whose asar
 * holds resources/ at its root, see electron-builder.yml).
 */
import { join, resolve } from 'node:path';
import type { TrayLevel } from './trayhealth.js';

export const RESOURCES_DIR = resolve(import.meta.dirname, '..', '..', 'resources');

/** The tray image for a level; Electron picks the `@2x` file beside it on HiDPI screens. */
export function trayIcon(level: TrayLevel): string {
  return join(RESOURCES_DIR, 'tray', `${level}.png`);
}

/**
 * The Electron shell, kept thin: one instance, the same ControlPlane as `kubelab server` with
 * its data in the app's user-data folder, a sandboxed window fed by the IPC bridge
 * (bridge/ipc.ts), streams renewed after sleep, and a clean stop on quit.
 */
import { app, BrowserWindow, ipcMain, powerMonitor } from 'electron';
import { join } from 'node:path';
import { desktopBridge } from './bridge/ipc.js';
import { ControlPlane } from './controlplane.js';
import { createLogger } from './logging.js';

export interface ShellInfo {
  listen: string;
  port: number;
  dataDir: string;
  caPath?: string;
  adminTokenPath: string;
}

let controlPlane: ControlPlane | undefined;

export async function startShell(): Promise<void> {
  if (!app.requestSingleInstanceLock()) {
    app.quit();
    return;
  }
  await app.whenReady();
  const dataDir = join(app.getPath('userData'), 'cluster');
  const listen = process.env.KUBELAB_LISTEN ?? '0.0.0.0:6443';
  controlPlane = await ControlPlane.start({
    dataDir,
    listen,
    logger: createLogger({ name: 'kubelab-desktop' }),
  });
  const cp = controlPlane;
  ipcMain.handle('kubelab:info', (): ShellInfo => ({
    listen,
    port: cp.port,
    dataDir,
    caPath: cp.pki?.caPath,
    adminTokenPath: cp.tokens.adminTokenPath,
  }));
  const bridge = desktopBridge(ipcMain, cp);
  // After sleep the GUI's streams are renewed (and the page told), so nothing shows stale data.
  powerMonitor.on('resume', () => bridge.resume());

  const window = new BrowserWindow({
    width: 1200,
    height: 800,
    title: 'kubelab',
    webPreferences: {
      preload: join(import.meta.dirname, '../preload/preload.cjs'),
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
    },
  });
  if (process.env.ELECTRON_RENDERER_URL) await window.loadURL(process.env.ELECTRON_RENDERER_URL);
  else await window.loadFile(join(import.meta.dirname, '../renderer/index.html'));

  app.on('second-instance', () => {
    if (window.isMinimized()) window.restore();
    window.focus();
  });
  let quitting = false;
  app.on('before-quit', (event) => {
    if (quitting || !controlPlane) return;
    // Hold the quit until the store has committed every accepted write.
    event.preventDefault();
    quitting = true;
    bridge.close();
    controlPlane.stop().finally(() => app.quit());
  });
  app.on('window-all-closed', () => app.quit());
}

if (process.versions.electron) void startShell();

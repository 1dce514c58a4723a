/**
 * The Electron shell, kept thin: one instance, the same ControlPlane as `kubelab server` with
 * its data in the app's user-data folder, a sandboxed window fed by the IPC bridge
 * (bridge/ipc.ts), a tray icon showing the cluster's health (shell/tray.ts), streams renewed
 * after sleep, and a clean stop on quit. Closing the window keeps the control plane running
 * for the lab's agents; the tray's Open (or launching the app again) brings the window back,
 * its Quit stops everything.
 */
import { app, BrowserWindow, dialog, ipcMain, Menu, powerMonitor, Tray } from 'electron';
import { join } from 'node:path';
import type { Identity } from '../client/api/local.js';
import { desktopBridge } from './bridge/ipc.js';
import { ControlPlane } from './controlplane.js';
import { createLogger } from './logging.js';
import { trayIcon } from './shell/icons.js';
import { stopBeforeQuit } from './shell/quit.js';
import { ClusterTray } from './shell/tray.js';
import { AppWindow, confine, windowOptions } from './shell/window.js';

export interface ShellInfo {
  listen: string;
  port: number;
  dataDir: string;
  caPath?: string;
  adminTokenPath: string;
}

export const PRODUCT_NAME = 'kubelab';

/** The tray only counts nodes: it reads, and nothing more. */
const TRAY_IDENTITY: Identity = { name: 'kubelab-desktop:tray', role: 'viewer' };

export async function startShell(): Promise<void> {
  // Started on a file (`electron-vite preview --entry …`), Electron would call the app
  // "Electron" and keep its data there; the packaged app and development share one name and
  // folder. (Also the key of the single-instance lock, so it comes first.)
  app.setName(PRODUCT_NAME);
  app.setPath('userData', join(app.getPath('appData'), PRODUCT_NAME));
  if (!app.requestSingleInstanceLock()) {
    app.quit();
    return;
  }
  await app.whenReady();
  const logger = createLogger({ name: 'kubelab-desktop' });
  const dataDir = join(app.getPath('userData'), 'cluster');
  const listen = process.env.KUBELAB_LISTEN ?? '0.0.0.0:6443';
  let cp: ControlPlane;
  try {
    cp = await ControlPlane.start({ dataDir, listen, logger });
  } catch (err) {
    // Without a window yet, a log line is all there would be: say it where it is seen.
    logger.error({ err }, 'the control plane could not start');
    dialog.showErrorBox(
      'kubelab could not start',
      `${(err as Error).message}\n\nThe cluster's data is in ${dataDir}. Set KUBELAB_LISTEN (host:port) to serve the API elsewhere if the port is taken.`,
    );
    app.quit();
    return;
  }
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

  const mainWindow = new AppWindow(async () => {
    const window = new BrowserWindow(windowOptions(join(import.meta.dirname, '../preload/preload.cjs')));
    confine(window.webContents);
    if (process.env.ELECTRON_RENDERER_URL) await window.loadURL(process.env.ELECTRON_RENDERER_URL);
    else await window.loadFile(join(import.meta.dirname, '../renderer/index.html'));
    return window;
  });
  const open = () =>
    void mainWindow.show().catch((err: unknown) => logger.error({ err }, 'could not open the window'));

  const tray = new ClusterTray({
    tray: new Tray(trayIcon('idle')),
    client: cp.client(TRAY_IDENTITY),
    buildMenu: (template) => Menu.buildFromTemplate(template),
    icon: trayIcon,
    onOpen: open,
    onQuit: () => app.quit(),
    logger: logger.child({ component: 'tray' }),
  });
  tray.start();

  app.on('second-instance', open);
  // macOS: a click on the dock icon when no window is open.
  app.on('activate', open);
  // Registering this keeps Electron from quitting with the last window: the lab's agents
  // still need the control plane. Quit is in the tray and the app menu.
  app.on('window-all-closed', () => undefined);
  stopBeforeQuit(
    app,
    async () => {
      tray.stop();
      bridge.close();
      await cp.stop();
    },
    (err) => logger.error({ err }, 'the control plane did not stop cleanly'),
  );
  // The system is shutting down or restarting: delay it until the store is closed. (Electron
  // passes the event, as its documentation says, though its typings declare no argument.)
  powerMonitor.on('shutdown', ((event: { preventDefault(): void }) => {
    event.preventDefault();
    app.quit();
  }) as () => void);
  open();
}

if (process.versions.electron) void startShell();

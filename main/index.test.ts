import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it, vi } from 'vitest';

// The Electron binary cannot be downloaded here: the shell is tested with electron mocked.
const userData = mkdtempSync(join(tmpdir(), 'kubelab-shell-'));
const handlers = new Map<string, (...args: unknown[]) => unknown>();
const appEvents = new Map<string, (...args: unknown[]) => unknown>();
const windows: Array<{ options: Record<string, any>; loaded?: string }> = [];
const quit = vi.fn();

vi.mock('electron', () => ({
  app: {
    requestSingleInstanceLock: () => true,
    whenReady: () => Promise.resolve(),
    getPath: (name: string) => (name === 'userData' ? userData : tmpdir()),
    on: (event: string, fn: (...args: unknown[]) => unknown) => appEvents.set(event, fn),
    quit,
  },
  ipcMain: { handle: (channel: string, fn: (...args: unknown[]) => unknown) => handlers.set(channel, fn) },
  BrowserWindow: class {
    record: { options: Record<string, any>; loaded?: string };
    constructor(options: Record<string, any>) {
      this.record = { options };
      windows.push(this.record);
    }
    async loadFile(path: string) {
      this.record.loaded = path;
    }
    async loadURL(url: string) {
      this.record.loaded = url;
    }
    isMinimized() {
      return false;
    }
    restore() {}
    focus() {}
  },
}));

afterAll(() => rmSync(userData, { recursive: true, force: true }));

it('starts the control plane in user data, opens a sandboxed window, and stops cleanly on quit', async () => {
  process.env.KUBELAB_LISTEN = '127.0.0.1:0';
  process.env.KUBELAB_LOG_LEVEL = 'silent';
  const { startShell } = await import('./index.js');
  await startShell();

  const info = (await handlers.get('kubelab:info')!()) as {
    port: number;
    dataDir: string;
    caPath: string;
    adminTokenPath: string;
  };
  expect(info.port).toBeGreaterThan(0);
  expect(info.dataDir).toBe(join(userData, 'cluster'));
  expect(info.caPath).toBe(join(userData, 'cluster', 'pki', 'ca.crt'));

  expect(windows).toHaveLength(1);
  const prefs = windows[0].options.webPreferences;
  expect(prefs).toMatchObject({ contextIsolation: true, sandbox: true, nodeIntegration: false });
  expect(prefs.preload).toMatch(/preload\.cjs$/);
  expect(windows[0].loaded).toMatch(/renderer[/\\]index\.html$/);

  const event = { preventDefault: vi.fn() };
  appEvents.get('before-quit')!(event);
  expect(event.preventDefault).toHaveBeenCalled();
  await vi.waitFor(() => expect(quit).toHaveBeenCalled());
});

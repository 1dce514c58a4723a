import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { BridgeMessage } from '../client/bridge/protocol.js';
import { BRIDGE_CHANNEL, RESUME_CHANNEL } from './bridge/channels.js';

// The Electron binary cannot be downloaded here: the shell is tested with electron mocked.
const userData = mkdtempSync(join(tmpdir(), 'kubelab-shell-'));
const handlers = new Map<string, (...args: unknown[]) => unknown>();
const listeners = new Map<string, (...args: any[]) => unknown>();
const appEvents = new Map<string, (...args: unknown[]) => unknown>();
const powerEvents = new Map<string, () => void>();
const windows: Array<{ options: Record<string, any>; loaded?: string }> = [];
const quit = vi.fn();
const exposed = new Map<string, any>();
const rendererListeners = new Map<string, Set<(...args: any[]) => void>>();
const ipcRenderer = {
  invoke: vi.fn(async () => ({ port: 1 })),
  send: vi.fn(),
  on: (channel: string, fn: (...args: any[]) => void) => {
    if (!rendererListeners.has(channel)) rendererListeners.set(channel, new Set());
    rendererListeners.get(channel)!.add(fn);
  },
  removeListener: (channel: string, fn: (...args: any[]) => void) =>
    rendererListeners.get(channel)?.delete(fn),
};

vi.mock('electron', () => ({
  app: {
    requestSingleInstanceLock: () => true,
    whenReady: () => Promise.resolve(),
    getPath: (name: string) => (name === 'userData' ? userData : tmpdir()),
    on: (event: string, fn: (...args: unknown[]) => unknown) => appEvents.set(event, fn),
    quit,
  },
  ipcMain: {
    handle: (channel: string, fn: (...args: unknown[]) => unknown) => handlers.set(channel, fn),
    on: (channel: string, fn: (...args: unknown[]) => unknown) => listeners.set(channel, fn),
    removeAllListeners: (channel: string) => listeners.delete(channel),
  },
  powerMonitor: { on: (event: string, fn: () => void) => powerEvents.set(event, fn) },
  contextBridge: { exposeInMainWorld: (key: string, api: unknown) => exposed.set(key, api) },
  ipcRenderer,
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

/** A window's webContents as the bridge sees it: what it was sent, and its end. */
function fakeWebContents(id: number) {
  const sent: unknown[][] = [];
  let destroyed = false;
  let onDestroyed: (() => void) | undefined;
  return {
    id,
    sent,
    send: (...args: unknown[]) => sent.push(args),
    isDestroyed: () => destroyed,
    once: (_event: 'destroyed', fn: () => void) => (onDestroyed = fn),
    destroy() {
      destroyed = true;
      onDestroyed?.();
    },
    /** The bridge messages sent to `page`. */
    messages: (page: string) =>
      sent.filter((a) => a[0] === BRIDGE_CHANNEL && a[1] === page).map((a) => a[2] as BridgeMessage),
  };
}

const fromRenderer = (contents: { id: number }, page: string, message: unknown) =>
  listeners.get(BRIDGE_CHANNEL)!({ sender: contents }, page, message);

describe('the Electron shell', () => {
  it('starts the control plane in user data and opens a sandboxed window', async () => {
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
  });

  it('answers the bridge over IPC as the desktop admin, one session per page', async () => {
    const contents = fakeWebContents(1);
    fromRenderer(contents, 'page-1', { id: 1, op: 'hello' });
    await vi.waitFor(() => expect(contents.messages('page-1')).toHaveLength(1));
    expect(contents.messages('page-1')[0]).toMatchObject({
      id: 1,
      op: 'result',
      value: {
        protocol: 1,
        user: 'desktop',
        server: { store: 'sqlite', dataDir: join(userData, 'cluster') },
      },
    });

    fromRenderer(contents, 'page-1', {
      id: 2,
      op: 'watch',
      kind: 'Namespace',
      options: { resourceVersion: '0' },
    });
    await vi.waitFor(() =>
      expect(contents.messages('page-1').some((m) => m.id === 2 && m.op === 'event')).toBe(true),
    );

    fromRenderer(contents, 'page-1', 'not a message');
    await vi.waitFor(() =>
      expect(contents.messages('page-1')).toContainEqual({
        id: 0,
        op: 'error',
        error: { reason: 'BadRequest', message: 'a message must be a JSON object' },
      }),
    );
  });

  it('after sleep, ends the streams with Disconnected and tells the page', async () => {
    const contents = fakeWebContents(2);
    fromRenderer(contents, 'page-a', {
      id: 1,
      op: 'watch',
      kind: 'Namespace',
      options: { resourceVersion: '0' },
    });
    await vi.waitFor(() => expect(contents.messages('page-a').some((m) => m.op === 'event')).toBe(true));

    powerEvents.get('resume')!();
    await vi.waitFor(() =>
      expect(contents.messages('page-a')).toContainEqual({
        id: 1,
        op: 'end',
        error: { reason: 'Disconnected', message: expect.stringContaining('woke from sleep') },
      }),
    );
    expect(contents.sent).toContainEqual([RESUME_CHANNEL]);
    // The session itself goes on.
    fromRenderer(contents, 'page-a', { id: 2, op: 'hello' });
    await vi.waitFor(() => expect(contents.messages('page-a').some((m) => m.id === 2)).toBe(true));
  });

  it('ends a reloaded page’s streams, and a closed window’s', async () => {
    const contents = fakeWebContents(3);
    fromRenderer(contents, 'old', {
      id: 1,
      op: 'watch',
      kind: 'Namespace',
      options: { resourceVersion: '0' },
    });
    await vi.waitFor(() => expect(contents.messages('old').some((m) => m.op === 'event')).toBe(true));
    const oldCount = contents.messages('old').length;

    // The page reloads: its new preload script has a new page id.
    fromRenderer(contents, 'new', {
      id: 1,
      op: 'watch',
      kind: 'Namespace',
      options: { resourceVersion: '0' },
    });
    await vi.waitFor(() => expect(contents.messages('new').some((m) => m.op === 'event')).toBe(true));
    fromRenderer(contents, 'new', {
      id: 2,
      op: 'create',
      object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'after-reload' } },
    });
    const sawIt = (page: string) =>
      contents
        .messages(page)
        .some((m) => m.op === 'event' && m.event.object.metadata?.name === 'after-reload');
    await vi.waitFor(() => expect(sawIt('new')).toBe(true));
    expect(sawIt('old')).toBe(false);
    expect(contents.messages('old')).toHaveLength(oldCount);

    contents.destroy();
    const sentBefore = contents.sent.length;
    const other = fakeWebContents(4);
    fromRenderer(other, 'x', {
      id: 1,
      op: 'create',
      object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'after-close' } },
    });
    await vi.waitFor(() => expect(other.messages('x')).toHaveLength(1));
    await new Promise((r) => setTimeout(r, 50));
    expect(contents.sent).toHaveLength(sentBefore);
  });

  it('stops cleanly on quit', async () => {
    const event = { preventDefault: vi.fn() };
    appEvents.get('before-quit')!(event);
    expect(event.preventDefault).toHaveBeenCalled();
    expect(listeners.has(BRIDGE_CHANNEL)).toBe(false);
    await vi.waitFor(() => expect(quit).toHaveBeenCalled());
  });
});

describe('the preload script', () => {
  it('exposes window.kubelab.bridge: send, onMessage for this page only, onResume', async () => {
    await import('./preload.js');
    const api = exposed.get('kubelab');
    expect(Object.keys(api.bridge).sort()).toEqual(['onMessage', 'onResume', 'send']);

    await api.info();
    expect(ipcRenderer.invoke).toHaveBeenCalledWith('kubelab:info');

    api.bridge.send({ id: 1, op: 'hello' });
    const [channel, page, message] = ipcRenderer.send.mock.calls[0] as unknown[];
    expect(channel).toBe(BRIDGE_CHANNEL);
    expect(typeof page).toBe('string');
    expect(message).toEqual({ id: 1, op: 'hello' });

    const got: unknown[] = [];
    const unsubscribe = api.bridge.onMessage((m: unknown) => got.push(m));
    const deliver = (...args: unknown[]) => {
      for (const fn of rendererListeners.get(BRIDGE_CHANNEL) ?? []) fn({ sender: 'the IPC event' }, ...args);
    };
    deliver(page, { id: 1, op: 'result', value: 'mine' });
    deliver('another-page', { id: 1, op: 'result', value: 'not mine' });
    expect(got).toEqual([{ id: 1, op: 'result', value: 'mine' }]);
    unsubscribe();
    deliver(page, { id: 2, op: 'result', value: 'after unsubscribe' });
    expect(got).toHaveLength(1);

    const resumed = vi.fn();
    api.bridge.onResume(resumed);
    for (const fn of rendererListeners.get(RESUME_CHANNEL) ?? []) fn({});
    expect(resumed).toHaveBeenCalledWith();
  });
});

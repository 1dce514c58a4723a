import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { kindInfo } from '../client/api/kinds.js';
import { watchEventsIn, type BridgeMessage } from '../client/bridge/protocol.js';
import { objectKey } from './apiserver/codec.js';
import { BRIDGE_CHANNEL, RESUME_CHANNEL } from './bridge/channels.js';
import { ControlPlane } from './controlplane.js';
import { openSqliteStorage } from './storage/sqlite.js';

// The Electron binary cannot be downloaded here: the shell is tested with electron mocked.
const appData = mkdtempSync(join(tmpdir(), 'kubelab-shell-'));
const userData = join(appData, 'kubelab');
const paths = new Map<string, string>([['appData', appData]]);
const handlers = new Map<string, (...args: unknown[]) => unknown>();
const listeners = new Map<string, (...args: any[]) => unknown>();
const appEvents = new Map<string, (...args: unknown[]) => unknown>();
const powerEvents = new Map<string, (...args: any[]) => void>();
const app = { name: 'Electron', quit: vi.fn() };
const quit = app.quit;
const showErrorBox = vi.fn();
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

class FakeBrowserWindow {
  static made: FakeBrowserWindow[] = [];
  loaded?: string;
  destroyed = false;
  readonly calls: string[] = [];
  readonly webContents = {
    openHandler: undefined as undefined | (() => unknown),
    navigate: undefined as undefined | ((e: { preventDefault(): void }) => void),
    setWindowOpenHandler: (h: () => unknown) => (this.webContents.openHandler = h),
    on: (_event: string, l: (e: { preventDefault(): void }) => void) => (this.webContents.navigate = l),
  };
  constructor(readonly options: Record<string, any>) {
    FakeBrowserWindow.made.push(this);
  }
  async loadFile(path: string) {
    this.loaded = path;
  }
  async loadURL(url: string) {
    this.loaded = url;
  }
  isDestroyed = () => this.destroyed;
  isMinimized = () => false;
  restore = () => this.calls.push('restore');
  show = () => this.calls.push('show');
  focus = () => this.calls.push('focus');
}
const windows = FakeBrowserWindow.made;

class FakeTray {
  static made: FakeTray[] = [];
  image: string;
  tooltip = '';
  menu: Array<{ label?: string; type?: string; click?: () => void }> = [];
  destroyed = false;
  constructor(image: string) {
    this.image = image;
    FakeTray.made.push(this);
  }
  setImage(image: string) {
    this.image = image;
  }
  setToolTip(tooltip: string) {
    this.tooltip = tooltip;
  }
  setContextMenu(menu: FakeTray['menu']) {
    this.menu = menu;
  }
  on() {}
  destroy() {
    this.destroyed = true;
  }
}

vi.mock('electron', () => ({
  app: {
    requestSingleInstanceLock: () => true,
    whenReady: () => Promise.resolve(),
    setName: (name: string) => (app.name = name),
    setPath: (name: string, path: string) => paths.set(name, path),
    getPath: (name: string) => paths.get(name) ?? tmpdir(),
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
  dialog: { showErrorBox },
  Menu: { buildFromTemplate: (template: unknown) => template },
  Tray: FakeTray,
  ipcRenderer,
  BrowserWindow: FakeBrowserWindow,
}));

// The shell's ControlPlane, to look at its store.
const started = vi.spyOn(ControlPlane, 'start');

afterAll(() => rmSync(appData, { recursive: true, force: true }));

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
  it('starts the control plane in user data and opens a sandboxed, confined window', async () => {
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

    await vi.waitFor(() => expect(windows[0]?.loaded).toBeDefined());
    expect(windows).toHaveLength(1);
    const prefs = windows[0].options.webPreferences;
    expect(prefs).toMatchObject({ contextIsolation: true, sandbox: true, nodeIntegration: false });
    expect(prefs.preload).toMatch(/preload\.cjs$/);
    expect(windows[0].loaded).toMatch(/renderer[/\\]index\.html$/);
    // Named kubelab, with its data under that name, however Electron was started.
    expect(app.name).toBe('kubelab');
    expect(windows[0].options).toMatchObject({ title: 'kubelab', minWidth: 720, minHeight: 480 });
    expect(windows[0].webContents.openHandler!()).toEqual({ action: 'deny' });
    const navigation = { preventDefault: vi.fn() };
    windows[0].webContents.navigate!(navigation);
    expect(navigation.preventDefault).toHaveBeenCalled();
  });

  it('shows the cluster’s health in the tray, from the nodes’ Ready conditions', async () => {
    expect(FakeTray.made).toHaveLength(1);
    const tray = FakeTray.made[0];
    await vi.waitFor(() => expect(tray.tooltip).toBe('kubelab — no nodes yet: add one from the window'));
    expect(tray.image).toMatch(/resources[/\\]tray[/\\]idle\.png$/);
    expect(existsSync(tray.image)).toBe(true);

    // A node joins and reports Ready (written here through the GUI's own bridge).
    const contents = fakeWebContents(10);
    fromRenderer(contents, 'tray', {
      id: 1,
      op: 'create',
      object: { apiVersion: 'v1', kind: 'Node', metadata: { name: 'pi-1' } },
    });
    await vi.waitFor(() => expect(contents.messages('tray')).toHaveLength(1));
    const node = (contents.messages('tray')[0] as { value: any }).value;
    fromRenderer(contents, 'tray', {
      id: 2,
      op: 'updateStatus',
      object: { ...node, status: { conditions: [{ type: 'Ready', status: 'True' }] } },
    });
    await vi.waitFor(() => expect(tray.tooltip).toBe('kubelab — 1/1 nodes Ready'));
    expect(tray.image).toMatch(/healthy\.png$/);
    expect(tray.menu.map((i) => i.label ?? i.type)).toEqual([
      'kubelab — 1/1 nodes Ready',
      'separator',
      'Open',
      'Quit',
    ]);
    fromRenderer(contents, 'tray', { id: 3, op: 'delete', kind: 'Node', name: 'pi-1' });
    await vi.waitFor(() => expect(tray.tooltip).toBe('kubelab — no nodes yet: add one from the window'));

    tray.menu.find((i) => i.label === 'Quit')!.click!();
    expect(quit).toHaveBeenCalledTimes(1);
    quit.mockClear();
  });

  it('keeps running with its window closed; Open and a second launch bring the window back', async () => {
    windows[0].destroyed = true;
    appEvents.get('window-all-closed')!();
    expect(quit).not.toHaveBeenCalled();

    FakeTray.made[0].menu.find((i) => i.label === 'Open')!.click!();
    await vi.waitFor(() => expect(windows).toHaveLength(2));
    await vi.waitFor(() => expect(windows[1].loaded).toMatch(/renderer[/\\]index\.html$/));
    appEvents.get('second-instance')!();
    appEvents.get('activate')!();
    expect(windows).toHaveLength(2);
    expect(windows[1].calls).toEqual(['show', 'focus', 'show', 'focus']);
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
      expect(contents.messages('page-1').some((m) => m.id === 2 && watchEventsIn(m).length > 0)).toBe(true),
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
    await vi.waitFor(() =>
      expect(contents.messages('page-a').some((m) => watchEventsIn(m).length > 0)).toBe(true),
    );

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
    await vi.waitFor(() =>
      expect(contents.messages('old').some((m) => watchEventsIn(m).length > 0)).toBe(true),
    );
    const oldCount = contents.messages('old').length;

    // The page reloads: its new preload script has a new page id.
    fromRenderer(contents, 'new', {
      id: 1,
      op: 'watch',
      kind: 'Namespace',
      options: { resourceVersion: '0' },
    });
    await vi.waitFor(() =>
      expect(contents.messages('new').some((m) => watchEventsIn(m).length > 0)).toBe(true),
    );
    fromRenderer(contents, 'new', {
      id: 2,
      op: 'create',
      object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'after-reload' } },
    });
    const sawIt = (page: string) =>
      contents
        .messages(page)
        .some((m) => watchEventsIn(m).some((e) => e.object.metadata?.name === 'after-reload'));
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

  it('holds a system shutdown until it has quit', () => {
    const event = { preventDefault: vi.fn() };
    powerEvents.get('shutdown')!(event);
    expect(event.preventDefault).toHaveBeenCalled();
    expect(quit).toHaveBeenCalledTimes(1);
    quit.mockClear();
  });

  it('stops cleanly on quit, with the writes of a pending group commit on disk', async () => {
    const cp = await started.mock.results[0].value;
    const names = Array.from({ length: 20 }, (_, i) => `before-quit-${i}`);
    // Quit the moment the last write joins the store's next batch: none is committed yet.
    const create = cp.storage.create.bind(cp.storage);
    let enqueued = 0;
    const event = { preventDefault: vi.fn() };
    vi.spyOn(cp.storage, 'create').mockImplementation((...args: unknown[]) => {
      const pending = (create as (...a: unknown[]) => Promise<unknown>)(...args);
      if (++enqueued === names.length) appEvents.get('before-quit')!(event);
      return pending;
    });
    // When the app really quits, the store must be closed: its lock file gone.
    const lock = join(userData, 'cluster', 'state.db.lock');
    expect(existsSync(lock)).toBe(true);
    let lockedAtQuit: boolean | undefined;
    quit.mockImplementationOnce(() => (lockedAtQuit = existsSync(lock)));
    const contents = fakeWebContents(20);
    for (const [i, name] of names.entries()) {
      fromRenderer(contents, 'quit', {
        id: i + 1,
        op: 'create',
        object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } },
      });
    }
    await vi.waitFor(() => expect(event.preventDefault).toHaveBeenCalled());
    expect(listeners.has(BRIDGE_CHANNEL)).toBe(false);
    expect(FakeTray.made[0].destroyed).toBe(true);
    await vi.waitFor(() => expect(quit).toHaveBeenCalled(), { timeout: 15_000 });
    expect(lockedAtQuit).toBe(false);

    // The file alone, opened again as the next start would.
    const store = await openSqliteStorage({ path: join(userData, 'cluster', 'state.db'), inline: true });
    try {
      for (const name of names) {
        expect(await store.get(objectKey(kindInfo('Namespace'), undefined, name)), name).not.toBeNull();
      }
    } finally {
      await store.close();
    }
  });

  it('explains a control plane that cannot start, and quits', async () => {
    const taken: Server = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as { port: number }).port;
    process.env.KUBELAB_LISTEN = `127.0.0.1:${port}`;
    try {
      quit.mockClear();
      const { startShell } = await import('./index.js');
      await startShell();
      expect(showErrorBox).toHaveBeenCalledWith(
        'kubelab could not start',
        expect.stringContaining(`${port}`),
      );
      expect(showErrorBox.mock.calls[0][1]).toContain(join(userData, 'cluster'));
      expect(quit).toHaveBeenCalled();
      expect(windows).toHaveLength(2);
    } finally {
      taken.close();
      process.env.KUBELAB_LISTEN = '127.0.0.1:0';
    }
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

/**
 * Waking from sleep in the desktop app, end to end without Electron: the main side's IPC bridge
 * (bridge/ipc.ts) and the real preload script (electron mocked, IPC delivered asynchronously
 * and structurally cloned, as Electron does) feed the GUI's own transport, client and stores.
 * While the computer "sleeps" the page receives nothing; on resume the page shows reconnecting
 * and its store catches up with everything it missed — without a reload.
 */
import { createPinia, setActivePinia } from 'pinia';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { watch } from 'vue';
import type { Node } from '../../client/api/types.js';
import { desktopBridge, type IpcBridge, type IpcWebContents } from '../../main/bridge/ipc.js';
import type { KubelabApi } from '../../main/preload.js';
import { BridgeClient } from '../../renderer/src/bridge/client.js';
import { ipcTransport } from '../../renderer/src/bridge/transports.js';
import type { InformerStatus } from '../../renderer/src/stores/informer.js';
import { useNodes } from '../../renderer/src/stores/kinds.js';
import { startTestControlPlane, type TestControlPlane } from '../support/controlplane.js';

type Listener = (...args: any[]) => void;
const mainListeners = new Map<string, Listener>();
const pageListeners = new Map<string, Set<Listener>>();
const exposed = new Map<string, unknown>();

/** The window's webContents: delivers to the page later, as IPC does; drops all while asleep. */
const contents: IpcWebContents & { asleep: boolean; dropped: number } = {
  id: 1,
  asleep: false,
  dropped: 0,
  send(channel: string, ...args: unknown[]) {
    if (this.asleep) {
      this.dropped++;
      return;
    }
    const copy = structuredClone(args);
    setImmediate(() => {
      for (const l of pageListeners.get(channel) ?? []) l({ sender: 'ipc' }, ...copy);
    });
  },
  isDestroyed: () => false,
  once: () => undefined,
};

vi.mock('electron', () => ({
  ipcMain: {
    on: (channel: string, l: Listener) => mainListeners.set(channel, l),
    removeAllListeners: (channel: string) => mainListeners.delete(channel),
  },
  ipcRenderer: {
    invoke: async () => ({}),
    send: (channel: string, ...args: unknown[]) => {
      const copy = structuredClone(args);
      setImmediate(() => mainListeners.get(channel)?.({ sender: contents }, ...copy));
    },
    on: (channel: string, l: Listener) => {
      if (!pageListeners.has(channel)) pageListeners.set(channel, new Set());
      pageListeners.get(channel)!.add(l);
    },
    removeListener: (channel: string, l: Listener) => pageListeners.get(channel)?.delete(l),
  },
  contextBridge: { exposeInMainWorld: (key: string, api: unknown) => exposed.set(key, api) },
}));

let t: TestControlPlane;
let ipc: IpcBridge;

beforeAll(async () => {
  t = await startTestControlPlane({ controllers: false, plaintext: true });
  ipc = desktopBridge(
    { on: (channel, l) => mainListeners.set(channel, l), removeAllListeners: (c) => mainListeners.delete(c) },
    t.cp,
  );
  await import('../../main/preload.js');
});
afterAll(async () => {
  ipc?.close();
  await t?.close();
});

const node = (name: string): Node => ({ apiVersion: 'v1', kind: 'Node', metadata: { name } });
const names = (nodes: Node[]) =>
  nodes
    .map((n) => n.metadata?.name)
    .sort()
    .join();

it('after sleep, the page shows reconnecting, then every change it missed, without a reload', async () => {
  const admin = t.cp.client();
  await admin.create(node('stays'));
  await admin.create(node('goes'));
  await admin.create(node('changes'));

  setActivePinia(createPinia());
  const page = exposed.get('kubelab') as KubelabApi;
  const bridge = new BridgeClient(ipcTransport(page.bridge));
  const store = useNodes();
  const seen: InformerStatus[] = [];
  watch(
    () => store.status,
    (s) => seen.push(s),
    { flush: 'sync' },
  );
  store.start(bridge);
  await vi.waitFor(() => expect(names(store.items)).toBe('changes,goes,stays'));
  expect(store.status).toBe('live');

  // Asleep: the page hears nothing of what happens meanwhile.
  contents.asleep = true;
  await admin.delete('Node', 'goes');
  await admin.patch('Node', 'changes', { metadata: { labels: { v: '2' } } });
  await admin.create(node('new'));
  await vi.waitFor(() => expect(contents.dropped).toBeGreaterThanOrEqual(3));
  expect(names(store.items)).toBe('changes,goes,stays');

  contents.asleep = false;
  seen.length = 0;
  ipc.resume();
  await vi.waitFor(() => {
    expect(names(store.items)).toBe('changes,new,stays');
    expect(store.get('changes')?.metadata?.labels?.v).toBe('2');
    expect(store.status).toBe('live');
  });
  expect(seen).toEqual(['reconnecting', 'live']);
  expect(ipc.sessions).toBe(1);

  // And it keeps following the cluster afterwards.
  await admin.create(node('after'));
  await vi.waitFor(() => expect(names(store.items)).toBe('after,changes,new,stays'));
  store.stop();
});

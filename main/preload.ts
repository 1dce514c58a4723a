/**
 * The renderer's only door to the main process: a small typed API over IPC, exposed as
 * `window.kubelab`. The bridge carries client/bridge/protocol.ts messages; each page load
 * gets its own id so the main side can tell a reloaded page from the one before it.
 */
import { contextBridge, ipcRenderer } from 'electron';
import type { BridgeMessage, BridgeRequest } from '../client/bridge/protocol.js';
import { BRIDGE_CHANNEL, RESUME_CHANNEL } from './bridge/channels.js';
import type { ShellInfo } from './index.js';

export interface KubelabBridgeApi {
  /** Sends a request to the control plane. */
  send(message: BridgeRequest): void;
  /** Every message from the control plane to this page; returns a function that unsubscribes. */
  onMessage(callback: (message: BridgeMessage) => void): () => void;
  /**
   * The computer woke from sleep. The page's streams have been ended with reason
   * "Disconnected" (watch again from the last resourceVersion); anything else that went stale
   * (ages, charts) can be refreshed here. Returns a function that unsubscribes.
   */
  onResume(callback: () => void): () => void;
}

export interface KubelabApi {
  info(): Promise<ShellInfo>;
  bridge: KubelabBridgeApi;
}

const page = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;

const api: KubelabApi = {
  info: () => ipcRenderer.invoke('kubelab:info'),
  bridge: {
    send: (message) => ipcRenderer.send(BRIDGE_CHANNEL, page, message),
    onMessage(callback) {
      // The IPC event (and its `sender`) never reaches the page.
      const listener = (_event: unknown, to: unknown, message: BridgeMessage) => {
        if (to === page) callback(message);
      };
      ipcRenderer.on(BRIDGE_CHANNEL, listener);
      return () => ipcRenderer.removeListener(BRIDGE_CHANNEL, listener);
    },
    onResume(callback) {
      const listener = () => callback();
      ipcRenderer.on(RESUME_CHANNEL, listener);
      return () => ipcRenderer.removeListener(RESUME_CHANNEL, listener);
    },
  },
};

contextBridge.exposeInMainWorld('kubelab', api);

/**
 * The two ways the GUI reaches the control plane: Electron IPC through the preload API
 * (desktop app), or a WebSocket to the server that served the page (browser mode; the session
 * cookie set at sign-in authenticates it). The WebSocket reconnects on its own, backing off
 * from 0.5 s to 10 s; the desktop app tells the GUI to reconnect after sleep.
 */
import type { BridgeMessage, BridgeRequest } from '../../../client/bridge/protocol.js';
import type { BridgeTransport, ConnectionState } from './client.js';

/** What main/preload.ts exposes as window.kubelab.bridge. */
export interface PreloadBridge {
  send(message: BridgeRequest): void;
  onMessage(listener: (message: BridgeMessage) => void): void;
  onResume?(listener: () => void): void;
}

export function ipcTransport(api: PreloadBridge): BridgeTransport {
  let stateListener: ((s: ConnectionState) => void) | undefined;
  return {
    send: (m) => api.send(m),
    onMessage: (l) => api.onMessage(l),
    onState(l) {
      stateListener = l;
      queueMicrotask(() => l('open'));
      // After sleep the streams of the old session are gone: cycle so every store resumes.
      api.onResume?.(() => {
        stateListener?.('closed');
        stateListener?.('open');
      });
    },
  };
}

export function webSocketTransport(url: string): BridgeTransport {
  let socket: WebSocket | undefined;
  let messageListener: ((m: BridgeMessage) => void) | undefined;
  let stateListener: ((s: ConnectionState) => void) | undefined;
  let wait = 500;
  // Requests made while the socket is still opening go out once it is open.
  let queue: BridgeRequest[] = [];
  const connect = () => {
    const ws = new WebSocket(url);
    socket = ws;
    ws.onopen = () => {
      wait = 500;
      for (const m of queue) ws.send(JSON.stringify(m));
      queue = [];
      stateListener?.('open');
    };
    ws.onmessage = (e) => {
      try {
        messageListener?.(JSON.parse(String(e.data)) as BridgeMessage);
      } catch {
        // A message that is not JSON is not ours: ignore it.
      }
    };
    ws.onclose = (e) => {
      if (socket !== ws) return;
      socket = undefined;
      queue = [];
      // 4401/4403: the session is not (or no longer) signed in; retrying cannot help.
      if (e.code === 4401 || e.code === 4403) {
        stateListener?.('unauthorized');
        return;
      }
      stateListener?.('closed');
      setTimeout(connect, wait);
      wait = Math.min(wait * 2, 10_000);
    };
  };
  return {
    send(m) {
      if (socket?.readyState === WebSocket.OPEN) socket.send(JSON.stringify(m));
      else if (socket?.readyState === WebSocket.CONNECTING) queue.push(m);
    },
    onMessage(l) {
      messageListener = l;
    },
    onState(l) {
      stateListener = l;
      connect();
    },
  };
}

/** IPC inside the desktop app, else a WebSocket back to the page's server. */
export function defaultTransport(): BridgeTransport {
  const preload = (window as unknown as { kubelab?: { bridge?: PreloadBridge } }).kubelab?.bridge;
  if (preload) return ipcTransport(preload);
  const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
  return webSocketTransport(`${scheme}://${location.host}/bridge`);
}

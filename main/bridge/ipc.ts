/**
 * The desktop app's transport of the bridge: Electron IPC. One BridgeSession per window's page
 * (webContents + the page id its preload script picked), acting as the desktop user; a new
 * page in the same window (a reload) replaces the old page's session, and a window that goes
 * away closes its own. Written against the few members of Electron's objects it uses, so it is
 * tested without Electron.
 */
import type { Identity } from '../../client/api/local.js';
import type { BridgeError, BridgeMessage } from '../../client/bridge/protocol.js';
import type { ControlPlane } from '../controlplane.js';
import { BRIDGE_CHANNEL, RESUME_CHANNEL } from './channels.js';
import { guiSession, type BridgeEndpoint } from './guisession.js';
import { sessionFor } from './sessionfor.js';

export interface IpcWebContents {
  readonly id: number;
  send(channel: string, ...args: unknown[]): void;
  isDestroyed(): boolean;
  once(event: 'destroyed', listener: () => void): unknown;
}

export interface IpcMainLike {
  on(channel: string, listener: (event: { sender: IpcWebContents }, ...args: unknown[]) => void): unknown;
  removeAllListeners(channel: string): unknown;
}

/** What each new page's session is made from: how it sends, and which session to make. */
export type SessionFactory = (send: (message: BridgeMessage) => void) => BridgeEndpoint;

const RESUMED: BridgeError = {
  reason: 'Disconnected',
  message: 'the computer woke from sleep: watch again from the last resourceVersion',
};

export class IpcBridge {
  private readonly pages = new Map<
    number,
    { page: string; session: BridgeEndpoint; contents: IpcWebContents }
  >();

  constructor(
    private readonly ipcMain: IpcMainLike,
    private readonly newSession: SessionFactory,
  ) {
    ipcMain.on(BRIDGE_CHANNEL, (event, page, message) => this.receive(event.sender, page, message));
  }

  /** Open sessions (one per window page that has spoken). */
  get sessions(): number {
    return this.pages.size;
  }

  private receive(contents: IpcWebContents, page: unknown, message: unknown): void {
    if (typeof page !== 'string' || !page || page.length > 64) return;
    let entry = this.pages.get(contents.id);
    if (entry?.page !== page) {
      // The window loaded a new page: the old one's streams have nobody to go to.
      entry?.session.close();
      const isNewWindow = !entry;
      const session = this.newSession((m) => {
        if (!contents.isDestroyed()) contents.send(BRIDGE_CHANNEL, page, m);
      });
      entry = { page, session, contents };
      this.pages.set(contents.id, entry);
      if (isNewWindow) {
        contents.once('destroyed', () => {
          this.pages.get(contents.id)?.session.close();
          this.pages.delete(contents.id);
        });
      }
    }
    entry.session.handle(message);
  }

  /**
   * After sleep: every stream ends with reason Disconnected (the GUI watches again from its
   * resourceVersions, as after a dropped connection), and each window is told it resumed.
   */
  resume(): void {
    for (const { session, contents } of this.pages.values()) {
      session.endStreams(RESUMED);
      if (!contents.isDestroyed()) contents.send(RESUME_CHANNEL);
    }
  }

  /** Ends every session and stops listening (the app quits). */
  close(): void {
    this.ipcMain.removeAllListeners(BRIDGE_CHANNEL);
    for (const { session } of this.pages.values()) session.close();
    this.pages.clear();
  }
}

/** Who the desktop app's GUI acts as: the person at the desktop, who owns the cluster. */
export const DESKTOP_IDENTITY: Identity = { name: 'desktop', role: 'admin' };

/** The desktop app's bridge: each page's session uses an in-process client as DESKTOP_IDENTITY. */
export function desktopBridge(ipcMain: IpcMainLike, cp: ControlPlane): IpcBridge {
  return new IpcBridge(ipcMain, (send) =>
    guiSession(cp, DESKTOP_IDENTITY, sessionFor(cp, DESKTOP_IDENTITY, send), send),
  );
}

/**
 * The app's one window: its options, and showing it — brought to the front when it exists,
 * made again when it was closed (the control plane keeps running in the tray meanwhile).
 * Written against the few members of Electron's BrowserWindow it uses.
 */
import type { BrowserWindowConstructorOptions } from 'electron';

export function windowOptions(preload: string): BrowserWindowConstructorOptions {
  return {
    width: 1200,
    height: 800,
    // Below this the navigation and a table's columns no longer fit side by side.
    minWidth: 720,
    minHeight: 480,
    title: 'kubelab',
    webPreferences: {
      preload,
      // The page sees only window.kubelab (preload.ts): no Node, no Electron.
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
    },
  };
}

export interface WindowContents {
  setWindowOpenHandler(handler: () => { action: 'deny' }): void;
  on(event: 'will-navigate', listener: (event: { preventDefault(): void }) => void): unknown;
}

/**
 * The GUI never opens windows or leaves its page: a link or script that tries (a manifest's
 * URL, say) must not turn the app's privileged window into a browser.
 */
export function confine(contents: WindowContents): void {
  contents.setWindowOpenHandler(() => ({ action: 'deny' }));
  contents.on('will-navigate', (event) => event.preventDefault());
}

export interface WindowLike {
  isDestroyed(): boolean;
  isMinimized(): boolean;
  restore(): void;
  show(): void;
  focus(): void;
}

export class AppWindow<W extends WindowLike> {
  private current: W | undefined;
  private opening: Promise<W> | undefined;

  /** `open` makes a window and loads the GUI into it. */
  constructor(private readonly open: () => Promise<W>) {}

  /** The window as it is now (undefined before the first show, or once closed). */
  get window(): W | undefined {
    return this.current && !this.current.isDestroyed() ? this.current : undefined;
  }

  show(): Promise<W> {
    const w = this.window;
    if (w) {
      if (w.isMinimized()) w.restore();
      w.show();
      w.focus();
      return Promise.resolve(w);
    }
    // A tray click and a second launch at the same moment make one window, not two.
    this.opening ??= this.open()
      .then((made) => (this.current = made))
      .finally(() => (this.opening = undefined));
    return this.opening;
  }
}

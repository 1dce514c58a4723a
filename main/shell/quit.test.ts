import { describe, expect, it, vi } from 'vitest';
import { stopBeforeQuit, type QuittingApp } from './quit.js';

/** An app whose quit() emits before-quit as Electron's does, and records a real quit. */
function fakeApp() {
  let listener: ((e: { preventDefault(): void }) => void) | undefined;
  const app = {
    quitted: 0,
    on: (_event: 'before-quit', l: (e: { preventDefault(): void }) => void) => (listener = l),
    quit() {
      let prevented = false;
      listener?.({ preventDefault: () => (prevented = true) });
      if (!prevented) app.quitted++;
    },
  } satisfies QuittingApp & { quitted: number };
  return app;
}

describe('stopBeforeQuit', () => {
  it('holds the quit until the stop finished, once for every request meanwhile', async () => {
    const app = fakeApp();
    let finish!: () => void;
    const stop = vi.fn(() => new Promise<void>((resolve) => (finish = resolve)));
    stopBeforeQuit(app, stop, () => undefined);
    app.quit();
    app.quit();
    expect(stop).toHaveBeenCalledTimes(1);
    expect(app.quitted).toBe(0);
    finish();
    await vi.waitFor(() => expect(app.quitted).toBe(1));
    expect(stop).toHaveBeenCalledTimes(1);
  });

  it('still quits when the stop fails, and says why', async () => {
    const app = fakeApp();
    const onError = vi.fn();
    stopBeforeQuit(app, () => Promise.reject(new Error('disk full')), onError);
    app.quit();
    await vi.waitFor(() => expect(app.quitted).toBe(1));
    expect(onError).toHaveBeenCalledWith(new Error('disk full'));
  });
});

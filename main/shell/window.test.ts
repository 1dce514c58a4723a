import { describe, expect, it, vi } from 'vitest';
import { AppWindow, confine, windowOptions, type WindowLike } from './window.js';

class FakeWindow implements WindowLike {
  destroyed = false;
  minimized = false;
  readonly calls: string[] = [];
  isDestroyed = () => this.destroyed;
  isMinimized = () => this.minimized;
  restore = () => this.calls.push('restore');
  show = () => this.calls.push('show');
  focus = () => this.calls.push('focus');
}

describe('AppWindow', () => {
  it('makes one window for shows that come together, then brings it to the front', async () => {
    const made: FakeWindow[] = [];
    const w = new AppWindow(async () => {
      await new Promise((r) => setImmediate(r));
      made.push(new FakeWindow());
      return made.at(-1)!;
    });
    const [a, b] = await Promise.all([w.show(), w.show()]);
    expect(made).toHaveLength(1);
    expect(a).toBe(b);
    made[0].minimized = true;
    await w.show();
    expect(made[0].calls).toEqual(['restore', 'show', 'focus']);
    expect(made).toHaveLength(1);
  });

  it('makes the window again once it was closed', async () => {
    const made: FakeWindow[] = [];
    const w = new AppWindow(async () => made[made.push(new FakeWindow()) - 1]);
    await w.show();
    made[0].destroyed = true;
    expect(w.window).toBeUndefined();
    expect(await w.show()).toBe(made[1]);
    expect(made).toHaveLength(2);
  });

  it('tries again after a window failed to open', async () => {
    let fail = true;
    const w = new AppWindow(async () => {
      if (fail) throw new Error('no display');
      return new FakeWindow();
    });
    await expect(w.show()).rejects.toThrow('no display');
    fail = false;
    expect(await w.show()).toBeInstanceOf(FakeWindow);
  });
});

describe('the window', () => {
  it('is sandboxed, isolated, without Node, and has a usable minimum size', () => {
    const options = windowOptions('/app/preload.cjs');
    expect(options.webPreferences).toEqual({
      preload: '/app/preload.cjs',
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
    });
    expect(options).toMatchObject({ title: 'kubelab', minWidth: 720, minHeight: 480 });
  });

  it('opens no other windows and never navigates away from the GUI', () => {
    let openHandler: (() => { action: string }) | undefined;
    let navigate: ((e: { preventDefault(): void }) => void) | undefined;
    confine({
      setWindowOpenHandler: (h) => (openHandler = h),
      on: (_event, l) => (navigate = l),
    });
    expect(openHandler!()).toEqual({ action: 'deny' });
    const event = { preventDefault: vi.fn() };
    navigate!(event);
    expect(event.preventDefault).toHaveBeenCalled();
  });
});

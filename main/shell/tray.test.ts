/**
 * The tray against a real control plane: its tooltip, icon and menu follow the nodes' Ready
 * conditions as they are written through the API, redrawn once per burst of changes.
 */
import { existsSync } from 'node:fs';
import type { MenuItemConstructorOptions } from 'electron';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Node } from '../../client/api/types.js';
import type { Client } from '../../client/client.js';
import { FakeClock } from '../../client/util/clock.js';
import { startTestControlPlane, type TestControlPlane } from '../../test/support/controlplane.js';
import { trayIcon } from './icons.js';
import { ClusterTray, TRAY_REFRESH_MS, type TrayLike } from './tray.js';

class FakeTray implements TrayLike<MenuItemConstructorOptions[]> {
  image = '';
  tooltip = '';
  menu: MenuItemConstructorOptions[] = [];
  draws = 0;
  destroyed = false;
  clickListener: (() => void) | undefined;
  setImage(image: string) {
    this.image = image;
    this.draws++;
  }
  setToolTip(tooltip: string) {
    this.tooltip = tooltip;
  }
  setContextMenu(menu: MenuItemConstructorOptions[]) {
    this.menu = menu;
  }
  on(_event: 'click', listener: () => void) {
    this.clickListener = listener;
  }
  destroy() {
    this.destroyed = true;
  }
}

let t: TestControlPlane;
let admin: Client;
const fake = new FakeTray();
const clock = new FakeClock();
const onOpen = vi.fn();
const onQuit = vi.fn();
let tray: ClusterTray<MenuItemConstructorOptions[]>;

beforeAll(async () => {
  t = await startTestControlPlane({ controllers: false });
  admin = t.cp.client();
  tray = new ClusterTray({
    tray: fake,
    client: t.cp.client({ name: 'tray', role: 'viewer' }),
    buildMenu: (template) => template,
    icon: trayIcon,
    onOpen,
    onQuit,
    clock,
  });
});
afterAll(async () => {
  tray?.stop();
  await t?.close();
});

async function setReady(name: string, status: 'True' | 'False' | 'Unknown'): Promise<void> {
  let node: Node;
  try {
    node = await admin.get('Node', name);
  } catch {
    node = await admin.create({ apiVersion: 'v1', kind: 'Node', metadata: { name } });
  }
  await admin.updateStatus({
    ...node,
    status: { conditions: [{ type: 'Ready', status, reason: 'Test', message: 'set by the test' }] },
  });
}

/** Waits until the informer has seen what the tray will show, then lets the redraw happen. */
async function redrawn(tooltip: string): Promise<void> {
  await vi.waitFor(() => expect(tray.health.tooltip).toBe(tooltip), { timeout: 10_000 });
  clock.advance(TRAY_REFRESH_MS);
  expect(fake.tooltip).toBe(tooltip);
}

describe('the tray', () => {
  it('says it is starting, then that there are no nodes', async () => {
    tray.start();
    expect(fake.tooltip).toBe('kubelab — starting the control plane…');
    expect(fake.image).toBe(trayIcon('idle'));
    await redrawn('kubelab — no nodes yet: add one from the window');
    expect(fake.image).toBe(trayIcon('idle'));
  });

  it('counts Ready nodes, with an icon per level', async () => {
    await setReady('a', 'True');
    await setReady('b', 'True');
    await redrawn('kubelab — 2/2 nodes Ready');
    expect(fake.image).toBe(trayIcon('healthy'));
    await setReady('b', 'Unknown');
    await redrawn('kubelab — 1/2 nodes Ready');
    expect(fake.image).toBe(trayIcon('degraded'));
    await setReady('a', 'False');
    await redrawn('kubelab — 0/2 nodes Ready');
    expect(fake.image).toBe(trayIcon('down'));
    await admin.delete('Node', 'a');
    await admin.delete('Node', 'b');
    await redrawn('kubelab — no nodes yet: add one from the window');
    for (const level of ['idle', 'healthy', 'degraded', 'down'] as const) {
      expect(existsSync(trayIcon(level)), trayIcon(level)).toBe(true);
      expect(existsSync(trayIcon(level).replace(/\.png$/, '@2x.png'))).toBe(true);
    }
  });

  it('redraws once for a burst of changes, and not at all for changes it does not show', async () => {
    const before = fake.draws;
    await Promise.all(Array.from({ length: 30 }, (_, i) => setReady(`burst-${i}`, 'True')));
    await vi.waitFor(() => expect(tray.health.tooltip).toBe('kubelab — 30/30 nodes Ready'), {
      timeout: 10_000,
    });
    expect(fake.draws).toBe(before);
    clock.advance(TRAY_REFRESH_MS);
    expect(fake.draws).toBe(before + 1);
    expect(fake.tooltip).toBe('kubelab — 30/30 nodes Ready');

    const timers = clock.pendingTimers();
    await admin.patch('Node', 'burst-0', { metadata: { labels: { rack: 'top' } } });
    // The change reached the tray: it scheduled a redraw.
    await vi.waitFor(() => expect(clock.pendingTimers()).toBe(timers + 1));
    clock.advance(TRAY_REFRESH_MS);
    expect(fake.draws).toBe(before + 1);
  });

  it('has a menu with the health line, Open and Quit; a click opens the window', () => {
    expect(fake.menu.map((i) => i.label ?? i.type)).toEqual([
      'kubelab — 30/30 nodes Ready',
      'separator',
      'Open',
      'Quit',
    ]);
    expect(fake.menu[0].enabled).toBe(false);
    (fake.menu[2].click as () => void)();
    expect(onOpen).toHaveBeenCalledTimes(1);
    (fake.menu[3].click as () => void)();
    expect(onQuit).toHaveBeenCalledTimes(1);
    fake.clickListener!();
    expect(onOpen).toHaveBeenCalledTimes(2);
  });

  it('removes the icon when stopped', () => {
    tray.stop();
    expect(fake.destroyed).toBe(true);
  });
});

/**
 * The tray icon: the cluster's health at a glance (trayhealth.ts), fed by a Node informer on
 * the in-process client, with a menu to open the window or quit. The health line is also the
 * menu's first item, because Linux trays (AppIndicator) show no tooltips. Written against the
 * few members of Electron's Tray and Menu it uses, so it is tested without Electron.
 */
import type { MenuItemConstructorOptions } from 'electron';
import type { Client } from '../../client/client.js';
import type { Logger } from '../../client/cache/reflector.js';
import { SharedIndexInformer } from '../../client/cache/informer.js';
import { realClock, type Clock, type TimerHandle } from '../../client/util/clock.js';
import { countReady, trayHealth, type TrayHealth, type TrayLevel } from './trayhealth.js';

/**
 * Node changes are gathered this long before the tray is redrawn: a cluster of 10,000 nodes
 * starting up is one redraw, not 10,000.
 */
export const TRAY_REFRESH_MS = 250;

export interface TrayLike<M> {
  setImage(image: string): void;
  setToolTip(tooltip: string): void;
  setContextMenu(menu: M): void;
  on(event: 'click', listener: () => void): unknown;
  destroy(): void;
}

export interface ClusterTrayOptions<M> {
  tray: TrayLike<M>;
  /** Reads Nodes (a viewer is enough). */
  client: Client;
  /** Electron's Menu.buildFromTemplate. */
  buildMenu(template: MenuItemConstructorOptions[]): M;
  /** The image file for a level (icons.ts). */
  icon(level: TrayLevel): string;
  onOpen(): void;
  onQuit(): void;
  clock?: Clock;
  logger?: Logger;
}

export class ClusterTray<M> {
  private readonly informer: SharedIndexInformer<'Node'>;
  private readonly clock: Clock;
  private pending: TimerHandle | undefined;
  private shown: TrayHealth | undefined;
  private stopped = false;

  constructor(private readonly options: ClusterTrayOptions<M>) {
    this.clock = options.clock ?? realClock;
    this.informer = new SharedIndexInformer({
      client: options.client,
      kind: 'Node',
      clock: this.clock,
      logger: options.logger,
    });
    options.tray.on('click', () => options.onOpen());
  }

  /** What the tray shows about the cluster now. */
  get health(): TrayHealth {
    return trayHealth(countReady(this.informer.list()), this.informer.hasSynced());
  }

  start(): void {
    this.refresh();
    const changed = () => this.scheduleRefresh();
    this.informer.addEventHandler({ onAdd: changed, onUpdate: changed, onDelete: changed });
    this.informer.run();
    // A cluster without nodes syncs without a single event.
    void this.informer.whenSynced().then(changed);
  }

  stop(): void {
    this.stopped = true;
    if (this.pending) this.clock.clearTimeout(this.pending);
    this.informer.stop();
    this.options.tray.destroy();
  }

  private scheduleRefresh(): void {
    if (this.stopped || this.pending) return;
    this.pending = this.clock.setTimeout(() => {
      this.pending = undefined;
      this.refresh();
    }, TRAY_REFRESH_MS);
  }

  /** Shows the current health, touching the tray only when what it shows changed. */
  private refresh(): void {
    if (this.stopped) return;
    const health = this.health;
    if (this.shown?.level === health.level && this.shown.tooltip === health.tooltip) return;
    this.shown = health;
    const { tray, icon, buildMenu, onOpen, onQuit } = this.options;
    tray.setImage(icon(health.level));
    tray.setToolTip(health.tooltip);
    tray.setContextMenu(
      buildMenu([
        { label: health.tooltip, enabled: false },
        { type: 'separator' },
        { label: 'Open', click: () => onOpen() },
        { label: 'Quit', click: () => onQuit() },
      ]),
    );
  }
}

/**
 * Quitting stops the control plane first: the quit is held (before-quit's preventDefault)
 * until the store has committed every accepted write and the listeners are closed, then it
 * goes ahead. Further quit requests meanwhile (a second Cmd+Q, the tray's Quit) wait for the
 * same stop.
 */

export interface QuittingApp {
  on(event: 'before-quit', listener: (event: { preventDefault(): void }) => void): unknown;
  quit(): void;
}

export function stopBeforeQuit(
  app: QuittingApp,
  stop: () => Promise<void>,
  onError: (err: unknown) => void,
): void {
  let state: 'running' | 'stopping' | 'stopped' = 'running';
  app.on('before-quit', (event) => {
    if (state === 'stopped') return;
    event.preventDefault();
    if (state === 'stopping') return;
    state = 'stopping';
    stop()
      .catch(onError)
      .finally(() => {
        state = 'stopped';
        app.quit();
      });
  });
}

/**
 * The Electron IPC channels of the bridge, shared by the preload script and the main side
 * (kept free of imports so the preload bundle stays tiny).
 *
 * - `kubelab:bridge`, renderer → main: `(page, request)`; main → renderer: `(page, message)`.
 *   `page` is a random id the preload script picks for each page load, so the main side can
 *   tell a reloaded page from the one before it (and end the old page's streams).
 * - `kubelab:resume`, main → renderer: the computer woke from sleep.
 */
export const BRIDGE_CHANNEL = 'kubelab:bridge';
export const RESUME_CHANNEL = 'kubelab:resume';

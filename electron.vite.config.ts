import vue from '@vitejs/plugin-vue';
import { defineConfig } from 'electron-vite';
import { resolve } from 'node:path';

// `electron-vite build` bundles the Electron shell (main/index.ts), its preload bridge and the
// Vue renderer into out/. It needs no Electron binary.
export default defineConfig({
  main: {
    build: {
      rolldownOptions: {
        // The SQLite write worker is its own entry; chunks sit beside the entries so the
        // store finds it at ./sqlite-worker.js wherever its code lands.
        input: { index: resolve('main/index.ts'), 'sqlite-worker': resolve('main/storage/sqlite-worker.ts') },
        output: { chunkFileNames: '[name]-[hash].js' },
      },
    },
  },
  preload: {
    // A sandboxed renderer can only load a CommonJS preload.
    build: {
      rolldownOptions: {
        input: { preload: resolve('main/preload.ts') },
        output: { format: 'cjs', entryFileNames: '[name].cjs' },
      },
    },
  },
  renderer: {
    root: 'renderer',
    plugins: [vue()],
    build: { rolldownOptions: { input: { index: resolve('renderer/index.html') } } },
  },
});

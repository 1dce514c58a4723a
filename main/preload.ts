/** The renderer's only door to the main process: a small typed API over IPC. */
import { contextBridge, ipcRenderer } from 'electron';

contextBridge.exposeInMainWorld('kubelab', {
  info: () => ipcRenderer.invoke('kubelab:info'),
});

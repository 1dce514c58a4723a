/**
 * The in-process transport: controllers inside the control plane call the apiserver directly,
 * through the same authorization, admission, validation and watch cache as a remote client,
 * without the network. Objects from the cache are shared and frozen: copy before changing.
 */
import { ApiClient, type Client, type Transport } from './client.js';
import type { Identity, LocalApi } from './api/local.js';

/**
 * `fieldManager`: who this client's writes are recorded for in managedFields, unless a write
 * names its own (default: the server names it after the identity).
 */
export function inProcessTransport(api: LocalApi, identity: Identity, fieldManager?: string): Transport {
  const managed = <T extends { fieldManager?: string }>(req: T): T =>
    fieldManager && !req.fieldManager ? { ...req, fieldManager } : req;
  return {
    get: (req) => api.get(identity, req),
    list: (req) => api.list(identity, req),
    watch: (req, sink) => api.watch(identity, req, sink),
    create: (req) => api.create(identity, managed(req)),
    update: (req) => api.update(identity, managed(req)),
    updateStatus: (req) => api.updateStatus(identity, managed(req)),
    patch: (req) => api.patch(identity, managed(req)),
    delete: (req) => api.delete(identity, req),
    bind: (req) => api.bind(identity, req),
    logs: (req, sink) => api.logs(identity, req, sink),
    close: () => undefined,
  };
}

export function inProcessClient(api: LocalApi, identity: Identity, fieldManager?: string): Client {
  return new ApiClient(inProcessTransport(api, identity, fieldManager));
}

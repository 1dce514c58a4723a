/**
 * The in-process transport: controllers inside the control plane call the apiserver directly,
 * through the same authorization, admission, validation and watch cache as a remote client,
 * without the network. Objects from the cache are shared and frozen: copy before changing.
 */
import { ApiClient, type Client, type Transport } from './client.js';
import type { Identity, LocalApi } from './api/local.js';

export function inProcessTransport(api: LocalApi, identity: Identity): Transport {
  return {
    get: (req) => api.get(identity, req),
    list: (req) => api.list(identity, req),
    watch: (req, sink) => api.watch(identity, req, sink),
    create: (req) => api.create(identity, req),
    update: (req) => api.update(identity, req),
    updateStatus: (req) => api.updateStatus(identity, req),
    patch: (req) => api.patch(identity, req),
    delete: (req) => api.delete(identity, req),
    bind: (req) => api.bind(identity, req),
    logs: (req, sink) => api.logs(identity, req, sink),
    close: () => undefined,
  };
}

export function inProcessClient(api: LocalApi, identity: Identity): Client {
  return new ApiClient(inProcessTransport(api, identity));
}

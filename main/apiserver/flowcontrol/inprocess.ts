/**
 * The in-process controllers' and scheduler's calls through flow control, as kube-controller-
 * manager's and kube-scheduler's are in Kubernetes: they call the apiserver directly, without
 * the network, but take a seat of their level (`workload-high`, levels.ts) like any remote
 * client. Watches and log streams are long-running and take none.
 */
import type { Identity, LocalApi } from '../../../client/api/local.js';
import type { FlowControl } from './dispatcher.js';

export function admittedApi(api: LocalApi, flowControl: FlowControl): LocalApi {
  const seated = <T>(id: Identity, work: () => Promise<T>): Promise<T> => flowControl.run(id, work);
  return {
    get: (id, req) => seated(id, () => api.get(id, req)),
    list: (id, req) => seated(id, () => api.list(id, req)),
    watch: (id, req, sink) => api.watch(id, req, sink),
    create: (id, req) => seated(id, () => api.create(id, req)),
    update: (id, req) => seated(id, () => api.update(id, req)),
    updateStatus: (id, req) => seated(id, () => api.updateStatus(id, req)),
    patch: (id, req) => seated(id, () => api.patch(id, req)),
    delete: (id, req) => seated(id, () => api.delete(id, req)),
    bind: (id, req) => seated(id, () => api.bind(id, req)),
    logs: (id, req, sink) => api.logs(id, req, sink),
  };
}

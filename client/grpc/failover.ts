/**
 * A transport over several control-plane replicas (on etcd): calls go to one; when it is
 * unreachable they move to the next, in turn, until one answers.
 */
import { ApiError } from '../api/errors.js';
import type { Transport } from '../client.js';

function unreachable(err: unknown): boolean {
  return err instanceof ApiError && (err.reason === 'Unavailable' || err.reason === 'Timeout');
}

export class FailoverTransport implements Transport {
  private active = 0;

  constructor(private readonly transports: Transport[]) {
    if (!transports.length) throw new Error('FailoverTransport needs at least one transport');
  }

  /** Index of the replica in use (for logs and tests). */
  get current(): number {
    return this.active;
  }

  private async attempt<T>(call: (t: Transport) => Promise<T>): Promise<T> {
    let last: unknown;
    for (let tried = 0; tried < this.transports.length; tried++) {
      const index = this.active;
      try {
        return await call(this.transports[index]);
      } catch (err) {
        if (!unreachable(err) || this.transports.length === 1) throw err;
        last = err;
        // Move on, unless another call already did.
        if (this.active === index) this.active = (index + 1) % this.transports.length;
      }
    }
    throw last;
  }

  get: Transport['get'] = (req) => this.attempt((t) => t.get(req));
  list: Transport['list'] = (req) => this.attempt((t) => t.list(req));
  watch: Transport['watch'] = (req, sink) => this.attempt((t) => t.watch(req, sink));
  create: Transport['create'] = (req) => this.attempt((t) => t.create(req));
  update: Transport['update'] = (req) => this.attempt((t) => t.update(req));
  updateStatus: Transport['updateStatus'] = (req) => this.attempt((t) => t.updateStatus(req));
  patch: Transport['patch'] = (req) => this.attempt((t) => t.patch(req));
  delete: Transport['delete'] = (req) => this.attempt((t) => t.delete(req));
  bind: Transport['bind'] = (req) => this.attempt((t) => t.bind(req));
  logs: Transport['logs'] = (req, sink) => this.attempt((t) => t.logs(req, sink));

  reconnect(): void {
    this.transports[this.active].reconnect?.();
  }

  close(): void {
    for (const t of this.transports) t.close();
  }
}

/**
 * A transport over several control-plane replicas (on etcd): calls go to one; when it is
 * unreachable, later calls go to the next, in turn. The failed call itself moves on with them
 * only when resend.ts's rule — the one retries follow — allows sending it again: a replica
 * that fails after applying a write (it crashed before answering, or answered too late) must
 * not have the write applied a second time by another replica.
 */
import { ApiError } from '../api/errors.js';
import type { Transport } from '../client.js';
import { mayResend, resendModeOf, type RetryMode } from '../resend.js';

/** The replica did not answer: later calls are better off at another one. */
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

  private async attempt<T>(mode: RetryMode, call: (t: Transport) => Promise<T>): Promise<T> {
    for (let tried = 1; ; tried++) {
      const index = this.active;
      try {
        return await call(this.transports[index]);
      } catch (err) {
        if (!unreachable(err)) throw err;
        // Move on, unless another call already did — also when this call is not repeated.
        if (this.active === index) this.active = (index + 1) % this.transports.length;
        if (tried >= this.transports.length || !mayResend(err, mode)) throw err;
      }
    }
  }

  get: Transport['get'] = (req) => this.attempt('read', (t) => t.get(req));
  list: Transport['list'] = (req) => this.attempt('read', (t) => t.list(req));
  watch: Transport['watch'] = (req, sink) => this.attempt('read', (t) => t.watch(req, sink));
  create: Transport['create'] = (req) => this.attempt(resendModeOf.create(req), (t) => t.create(req));
  update: Transport['update'] = (req) => this.attempt(resendModeOf.update(req), (t) => t.update(req));
  updateStatus: Transport['updateStatus'] = (req) =>
    this.attempt(resendModeOf.update(req), (t) => t.updateStatus(req));
  patch: Transport['patch'] = (req) => this.attempt(resendModeOf.patch(), (t) => t.patch(req));
  delete: Transport['delete'] = (req) => this.attempt(resendModeOf.delete(req), (t) => t.delete(req));
  bind: Transport['bind'] = (req) => this.attempt(resendModeOf.bind(), (t) => t.bind(req));
  logs: Transport['logs'] = (req, sink) => this.attempt('read', (t) => t.logs(req, sink));

  reconnect(): void {
    this.transports[this.active].reconnect?.();
  }

  close(): void {
    for (const t of this.transports) t.close();
  }
}

/**
 * The namespace controller: when a namespace is deleted (Terminating), delete everything in
 * it, and once nothing is left, clear its "kubernetes" finalizer so the namespace itself goes.
 * Pods leave only when their agents have stopped them, so this may take a grace period.
 */
import { isNotFound } from '../../../client/api/errors.js';
import { KINDS } from '../../../client/api/kinds.js';
import type { KindName, Namespace } from '../../../client/api/types.js';
import { clone } from '../../../client/util/objects.js';
import type { Controller, ControllerContext, ControllerDefinition } from '../types.js';
import { KeyWorker } from '../worker.js';

export const NAMESPACE_FINALIZER = 'kubernetes';
const NAMESPACED_KINDS = KINDS.filter((k) => k.namespaced).map((k) => k.kind);
/** How soon to look again while content is still going away. */
const RECHECK_MS = 2_000;

export class NamespaceController implements Controller {
  private readonly worker: KeyWorker;

  constructor(private readonly ctx: ControllerContext) {
    this.worker = new KeyWorker(
      { name: 'namespace', clock: ctx.clock, logger: ctx.logger, metrics: ctx.queueMetrics },
      (k) => this.sync(k),
    );
    const informer = ctx.informers.informerFor('Namespace');
    const consider = (ns: Namespace) => {
      if (ns.metadata?.deletionTimestamp) this.worker.enqueue(ns.metadata.name!);
    };
    informer.addEventHandler({ onAdd: consider, onUpdate: (_o, n) => consider(n) });
  }

  run(workers: number): void {
    this.worker.run(workers);
  }

  stop(): Promise<void> {
    return this.worker.stop();
  }

  async sync(name: string): Promise<void> {
    const { client } = this.ctx;
    let ns: Namespace;
    try {
      ns = await client.get('Namespace', name);
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
    if (!ns.metadata?.deletionTimestamp || !(ns.spec?.finalizers ?? []).includes(NAMESPACE_FINALIZER)) return;

    let remaining = 0;
    for (const kind of NAMESPACED_KINDS) remaining += await this.deleteAll(kind as KindName, name);
    if (remaining > 0) {
      this.worker.enqueueAfter(name, RECHECK_MS);
      return;
    }
    const next = clone(ns);
    next.spec!.finalizers = (next.spec!.finalizers ?? []).filter((f) => f !== NAMESPACE_FINALIZER);
    await client.update(next);
    this.ctx.logger.info({ namespace: name }, 'namespace emptied and finalized');
  }

  /** Deletes every object of a kind in the namespace; returns how many still exist. */
  private async deleteAll(kind: KindName, namespace: string): Promise<number> {
    const { items } = await this.ctx.client.list(kind, { namespace });
    let remaining = 0;
    for (const obj of items) {
      if (obj.metadata?.deletionTimestamp) {
        remaining++;
        continue;
      }
      try {
        const res = await this.ctx.client.delete(kind, obj.metadata!.name!, {
          namespace,
          preconditions: { uid: obj.metadata?.uid },
        });
        if (!res.deleted) remaining++;
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
    return remaining;
  }
}

export const namespaceController: ControllerDefinition = {
  name: 'namespace',
  enabledByDefault: true,
  defaultWorkers: 2,
  create: (ctx) => new NamespaceController(ctx),
};

/**
 * The garbage collector (Kubernetes' garbagecollector): follows ownerReferences across every
 * kind. Dependents whose owners are gone are deleted (background cascading, the default);
 * an owner deleted in the foreground keeps its `foregroundDeletion` finalizer until its
 * blocking dependents are gone or let go of it; an owner deleted with orphaning keeps its
 * `orphan` finalizer until its dependents no longer point at it. A reference names an owner in
 * the dependent's own namespace (or a cluster-scoped one): an owner with the same uid elsewhere
 * does not count, and the dependent is told so with an `OwnerRefInvalidNamespace` event.
 */
import { isNotFound } from '../../../client/api/errors.js';
import { KINDS } from '../../../client/api/kinds.js';
import type { KindName, KubeObject, ObjectLike, OwnerReference } from '../../../client/api/types.js';
import type { SharedIndexInformer } from '../../../client/cache/informer.js';
import { OWNER_UID_INDEX, ownerUidIndexFunc, UID_INDEX, uidIndexFunc } from '../../../client/cache/keys.js';
import type { EventRecorder } from '../../../client/events/recorder.js';
import { clone } from '../../../client/util/objects.js';
import type { Controller, ControllerContext, ControllerDefinition } from '../types.js';
import { KeyWorker } from '../worker.js';
import {
  blockingDependents,
  crossesNamespace,
  decideForDependent,
  FOREGROUND_FINALIZER,
  INVALID_NAMESPACE_REASON,
  invalidNamespaceMessage,
  isAt,
  isDeletingDependents,
  isOrphaning,
  locateOwner,
  ORPHAN_FINALIZER,
  type OwnerState,
  unblockedOwnerUids,
} from './classify.js';

/** Kinds the collector follows (events and metrics carry no owners and expire on their own). */
const GC_KINDS = KINDS.filter((k) => k.kind !== 'Event' && k.kind !== 'NodeMetrics').map((k) => k.kind);

interface ItemRef {
  kind: KindName;
  namespace?: string;
  name: string;
  uid: string;
}

function keyOf(obj: ObjectLike): string {
  const m = obj.metadata ?? {};
  return [obj.kind, m.namespace ?? '', m.name, m.uid].join('|');
}

function parseKey(key: string): ItemRef {
  const [kind, namespace, name, uid] = key.split('|');
  return { kind: kind as KindName, namespace: namespace || undefined, name, uid };
}

export class GarbageCollector implements Controller {
  private readonly informers: SharedIndexInformer<KindName>[];
  private readonly deleter: KeyWorker;
  private readonly orphaner: KeyWorker;
  private readonly recorder: EventRecorder;

  constructor(private readonly ctx: ControllerContext) {
    this.recorder = ctx.recorder('garbage-collector-controller');
    this.deleter = new KeyWorker(
      {
        name: 'garbage_collector_attempt_to_delete',
        clock: ctx.clock,
        logger: ctx.logger,
        metrics: ctx.queueMetrics,
      },
      (k) => this.attemptToDelete(k),
    );
    this.orphaner = new KeyWorker(
      {
        name: 'garbage_collector_attempt_to_orphan',
        clock: ctx.clock,
        logger: ctx.logger,
        metrics: ctx.queueMetrics,
      },
      (k) => this.attemptToOrphan(k),
    );
    this.informers = GC_KINDS.map((kind) => {
      const informer = ctx.informers.informerFor(kind) as unknown as SharedIndexInformer<KindName>;
      for (const [name, fn] of [
        [OWNER_UID_INDEX, ownerUidIndexFunc],
        [UID_INDEX, uidIndexFunc],
      ] as const) {
        try {
          informer.addIndexers({ [name]: fn });
        } catch {
          // Another controller added it already: the informer is shared.
        }
      }
      informer.addEventHandler({
        onAdd: (obj) => this.observe(obj as KubeObject, undefined),
        onUpdate: (old, obj) => this.observe(obj as KubeObject, old as KubeObject),
        onDelete: (obj) => this.gone(obj as KubeObject),
      });
      return informer;
    });
  }

  run(workers: number): void {
    this.deleter.run(workers);
    this.orphaner.run(workers);
  }

  async stop(): Promise<void> {
    await Promise.all([this.deleter.stop(), this.orphaner.stop()]);
  }

  /** Resolves once neither queue has work queued or in hand (for tests). */
  async idle(): Promise<void> {
    do {
      await this.deleter.idle();
      await this.orphaner.idle();
    } while (!this.deleter.queue.isIdle() || !this.orphaner.queue.isIdle());
  }

  // ------------------------------------------------------------------ what to look at

  private observe(obj: KubeObject, old: KubeObject | undefined): void {
    const refs = obj.metadata?.ownerReferences ?? [];
    // A dependent that let go of an owner (dropped the reference, or no longer blocks it) may be
    // the last one that owner's foreground deletion waits for: nothing else would wake it.
    if (old) {
      for (const uid of unblockedOwnerUids(old, obj))
        for (const owner of this.byUid(uid)) this.deleter.enqueue(keyOf(owner));
    }
    if (
      refs.length &&
      (!old ||
        JSON.stringify(old.metadata?.ownerReferences) !== JSON.stringify(refs) ||
        this.anyOwnerMissing(refs))
    ) {
      this.deleter.enqueue(keyOf(obj));
    }
    if (isOrphaning(obj)) this.orphaner.enqueue(keyOf(obj));
    if (isDeletingDependents(obj)) {
      this.deleter.enqueue(keyOf(obj));
      for (const dep of this.dependentsOf(obj.metadata?.uid ?? '')) this.deleter.enqueue(keyOf(dep));
    }
  }

  private gone(obj: KubeObject): void {
    for (const dep of this.dependentsOf(obj.metadata?.uid ?? '')) this.deleter.enqueue(keyOf(dep));
    // An owner deleting in the foreground may now be free to go.
    for (const ref of obj.metadata?.ownerReferences ?? []) {
      for (const owner of this.byUid(ref.uid ?? ''))
        if (isDeletingDependents(owner)) this.deleter.enqueue(keyOf(owner));
    }
  }

  private anyOwnerMissing(refs: OwnerReference[]): boolean {
    return refs.some((r) => this.byUid(r.uid ?? '').length === 0);
  }

  private dependentsOf(uid: string): KubeObject[] {
    if (!uid) return [];
    return this.informers.flatMap((i) => i.indexer.byIndex(OWNER_UID_INDEX, uid) as KubeObject[]);
  }

  private byUid(uid: string): KubeObject[] {
    if (!uid) return [];
    return this.informers.flatMap((i) => i.indexer.byIndex(UID_INDEX, uid) as KubeObject[]);
  }

  // ------------------------------------------------------------------ attemptToDelete

  private async attemptToDelete(key: string): Promise<void> {
    const ref = parseKey(key);
    const live = await this.getLive(ref.kind, ref.name, ref.namespace);
    if (!live || live.metadata?.uid !== ref.uid) return;
    if (isDeletingDependents(live)) return this.processDeletingDependents(live);
    // Being deleted is a one-way trip: wait for the object to go (its owners hear of it then).
    if (live.metadata?.deletionTimestamp) return;
    const refs = live.metadata?.ownerReferences ?? [];
    if (!refs.length) return;

    const owners = new Map<string, OwnerState>();
    for (const r of refs) owners.set(r.uid ?? '', await this.ownerState(r, live));
    const deps = this.dependentsOf(live.metadata?.uid ?? '');
    const decision = decideForDependent(live, owners, {
      any: deps.length > 0,
      anyDeletingDependents: deps.some(isDeletingDependents),
    });
    const { client } = this.ctx;
    switch (decision.action) {
      case 'none':
        return;
      case 'removeOwnerReferences':
      case 'unblockOwnerReferences': {
        const next = clone(live);
        const uids = new Set(decision.uids);
        next.metadata!.ownerReferences =
          decision.action === 'removeOwnerReferences'
            ? refs.filter((r) => !uids.has(r.uid ?? ''))
            : refs.map((r) => (uids.has(r.uid ?? '') ? { ...r, blockOwnerDeletion: false } : r));
        await client.update(next);
        if (decision.action === 'unblockOwnerReferences') this.deleter.enqueue(key);
        return;
      }
      case 'delete':
        this.ctx.logger.info(
          { kind: ref.kind, namespace: ref.namespace, name: ref.name, policy: decision.propagationPolicy },
          'deleting an object whose owners are gone',
        );
        try {
          await client.delete(ref.kind, ref.name, {
            namespace: ref.namespace,
            propagationPolicy: decision.propagationPolicy,
            preconditions: { uid: ref.uid },
          });
        } catch (err) {
          if (!isNotFound(err)) throw err;
        }
        return;
    }
  }

  /** An owner deleting in the foreground: delete its dependents, then let it go. */
  private async processDeletingDependents(owner: KubeObject): Promise<void> {
    const uid = owner.metadata?.uid ?? '';
    const dependents = this.dependentsOf(uid);
    const blocking = blockingDependents(owner, dependents);
    if (blocking.length === 0) {
      await this.removeFinalizer(owner, FOREGROUND_FINALIZER);
      return;
    }
    // Dependents are deleted by their own attemptToDelete (their owner is "waiting").
    for (const dep of dependents) this.deleter.enqueue(keyOf(dep));
  }

  private async ownerState(ref: OwnerReference, dependent: KubeObject): Promise<OwnerState> {
    const where = locateOwner(ref, dependent);
    // An owner of a kind this cluster does not serve cannot be checked: leave the object be.
    if (where.scope === 'unknownKind') return 'solid';
    const seen = this.byUid(ref.uid ?? '');
    // The uid is known, but in another namespace: the reference cannot mean that object. Say
    // so, as Kubernetes does, since the dependent is about to be collected (or, cluster-scoped,
    // left alone) for a reason the user cannot otherwise see.
    if (seen.some((o) => crossesNamespace(dependent, o))) {
      this.recorder.event(
        dependent,
        'Warning',
        INVALID_NAMESPACE_REASON,
        invalidNamespaceMessage(ref, dependent),
      );
    }
    if (where.scope === 'invalid') return 'invalid';
    const cached = seen.find((o) => isAt(o, where));
    if (cached) return isDeletingDependents(cached) ? 'waiting' : 'solid';
    // The cache may lag: ask the server before calling an owner gone.
    const live = await this.getLive(where.kind, where.name, where.namespace);
    if (!live || live.metadata?.uid !== ref.uid) return 'dangling';
    return isDeletingDependents(live) ? 'waiting' : 'solid';
  }

  // ------------------------------------------------------------------ attemptToOrphan

  private async attemptToOrphan(key: string): Promise<void> {
    const ref = parseKey(key);
    const owner = await this.getLive(ref.kind, ref.name, ref.namespace);
    if (!owner || owner.metadata?.uid !== ref.uid || !isOrphaning(owner)) return;
    for (const dep of this.dependentsOf(ref.uid)) {
      const live = await this.getLive(
        dep.kind as KindName,
        dep.metadata?.name ?? '',
        dep.metadata?.namespace,
      );
      if (!live) continue;
      const refs = live.metadata?.ownerReferences ?? [];
      if (!refs.some((r) => r.uid === ref.uid)) continue;
      const next = clone(live);
      next.metadata!.ownerReferences = refs.filter((r) => r.uid !== ref.uid);
      await this.ctx.client.update(next);
    }
    await this.removeFinalizer(owner, ORPHAN_FINALIZER);
  }

  // ------------------------------------------------------------------ helpers

  private async removeFinalizer(obj: KubeObject, finalizer: string): Promise<void> {
    const live = await this.getLive(obj.kind as KindName, obj.metadata?.name ?? '', obj.metadata?.namespace);
    if (
      !live ||
      live.metadata?.uid !== obj.metadata?.uid ||
      !(live.metadata?.finalizers ?? []).includes(finalizer)
    )
      return;
    const next = clone(live);
    next.metadata!.finalizers = (next.metadata!.finalizers ?? []).filter((f) => f !== finalizer);
    await this.ctx.client.update(next);
  }

  private async getLive(
    kind: KindName,
    name: string,
    namespace: string | undefined,
  ): Promise<KubeObject | undefined> {
    try {
      return await this.ctx.client.get(kind, name, { namespace });
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }
}

export const garbageCollectorController: ControllerDefinition = {
  name: 'garbagecollector',
  enabledByDefault: true,
  defaultWorkers: 4,
  create: (ctx) => new GarbageCollector(ctx),
};

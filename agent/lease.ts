/**
 * The node's heartbeat: a Lease in kube-node-lease renewed every 10 s with a 40 s duration,
 * independent of status writes (Kubernetes' node lease controller). Failures retry with
 * backoff from 200 ms to 7 s; the last lease is kept so a renewal is one write.
 */
import { isAlreadyExists, isConflict, isNotFound } from '../client/api/errors.js';
import type { Lease } from '../client/api/types.js';
import type { Client } from '../client/client.js';
import { Backoff } from '../client/util/backoff.js';
import { rfc3339Micro, type Clock } from '../client/util/clock.js';
import { Sleeper } from '../client/util/sleeper.js';
import { clone } from '../client/util/objects.js';
import type { ControlPlaneContact } from './contact.js';
import type { Logger } from './logger.js';
import { NODE_LEASE_NAMESPACE } from '../client/api/wellknown.js';

export interface NodeLeaseOptions {
  client: Client;
  nodeName: string;
  clock: Clock;
  logger: Logger;
  leaseDurationSeconds: number;
  renewMs: number;
  /** Observes each successful renewal (metrics, tests). */
  onRenew?: (at: number, latencyMs: number) => void;
  /** Logs outages of the control plane once: renewals failing for want of it are logged at debug. */
  contact?: ControlPlaneContact;
}

export class NodeLeaseController {
  private lease: Lease | undefined;
  private stopped = false;
  private loop: Promise<void> | undefined;
  private readonly backoff: Backoff;
  private readonly sleeper: Sleeper;
  renewals = 0;

  constructor(private readonly options: NodeLeaseOptions) {
    this.backoff = new Backoff({ initialMs: 200, maxMs: 7_000, jitter: 0.2 }, options.clock);
    this.sleeper = new Sleeper(options.clock);
  }

  run(): Promise<void> {
    this.loop ??= this.runLoop();
    return this.loop;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.sleeper.stop();
    await this.loop;
  }

  private async runLoop(): Promise<void> {
    while (!this.stopped) {
      const started = this.options.clock.now();
      try {
        await this.renew();
        this.renewals++;
        this.backoff.reset();
        this.options.onRenew?.(this.options.clock.now(), this.options.clock.now() - started);
        await this.sleeper.sleep(this.options.renewMs);
      } catch (err) {
        const delay = this.backoff.next();
        // Before the node is registered the lease waits for it: that is not worth a warning;
        // nor is a control plane that is away (the contact says so once).
        const level = isNotFound(err) || this.options.contact?.explains(err) ? 'debug' : 'warn';
        this.options.logger[level](
          { node: this.options.nodeName, err: (err as Error).message, retryInMs: Math.round(delay) },
          'failed to renew the node lease',
        );
        await this.sleeper.sleep(delay);
      }
    }
  }

  private async renew(): Promise<void> {
    const { client, nodeName, clock } = this.options;
    const now = rfc3339Micro(clock.now());
    if (this.lease) {
      try {
        const next = clone(this.lease);
        next.spec = {
          ...next.spec,
          holderIdentity: nodeName,
          leaseDurationSeconds: this.options.leaseDurationSeconds,
          renewTime: now,
        };
        this.lease = await client.update(next);
        return;
      } catch (err) {
        // Someone else wrote it (or it is gone): read it again below.
        if (!isConflict(err) && !isNotFound(err)) throw err;
        this.lease = undefined;
      }
    }
    try {
      const current = await client.get('Lease', nodeName, { namespace: NODE_LEASE_NAMESPACE });
      const next = clone(current);
      next.spec = {
        ...next.spec,
        holderIdentity: nodeName,
        leaseDurationSeconds: this.options.leaseDurationSeconds,
        renewTime: now,
      };
      this.lease = await client.update(next);
    } catch (err) {
      if (!isNotFound(err)) throw err;
      this.lease = await this.create(now);
    }
  }

  private async create(now: string): Promise<Lease> {
    const { client, nodeName } = this.options;
    // Owned by the Node, so deleting the Node deletes its lease (as in Kubernetes): the first
    // lease waits for the node to be registered.
    const node = await client.get('Node', nodeName);
    const lease: Lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: {
        name: nodeName,
        namespace: NODE_LEASE_NAMESPACE,
        ...(node?.metadata?.uid
          ? { ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: nodeName, uid: node.metadata.uid }] }
          : {}),
      },
      spec: {
        holderIdentity: nodeName,
        leaseDurationSeconds: this.options.leaseDurationSeconds,
        renewTime: now,
      },
    };
    try {
      return await client.create(lease);
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
      return client.get('Lease', nodeName, { namespace: NODE_LEASE_NAMESPACE });
    }
  }
}

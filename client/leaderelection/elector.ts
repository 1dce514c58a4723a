/**
 * Leader election on a Lease (client-go's leaderelection): candidates race to hold the lease;
 * the holder renews it every retry period and stops acting as soon as it has failed to renew
 * for the renew deadline — well before the lease duration lets anyone else take over, so two
 * leaders never act at once. Candidates watch the lease, so they see each renewal as it
 * happens and take over as soon as the holder's lease has run out.
 */
import { isNotFound } from '../api/errors.js';
import type { Lease } from '../api/types.js';
import { SharedIndexInformer } from '../cache/informer.js';
import type { Client } from '../client.js';
import { jittered } from '../util/backoff.js';
import { realClock, rfc3339Micro, type Clock } from '../util/clock.js';
import { Sleeper } from '../util/sleeper.js';

export interface LeaderCallbacks {
  /** This candidate now leads: start acting. */
  onStartedLeading(): void;
  /** This candidate no longer leads (lost the lease or stopped): stop acting at once. */
  onStoppedLeading(): void;
  /** The lease has a (new) holder, possibly this candidate. */
  onNewLeader?(identity: string): void;
}

export interface LeaderElectorOptions {
  client: Client;
  /** The Lease's name and namespace (default kube-system). */
  name: string;
  namespace?: string;
  identity: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  /** Give the lease up on stop() so the next candidate need not wait it out (default true). */
  releaseOnStop?: boolean;
  callbacks: LeaderCallbacks;
  clock?: Clock;
}

export const LEADER_ELECTION_DEFAULTS = {
  leaseDurationMs: 15_000,
  renewDeadlineMs: 10_000,
  retryPeriodMs: 2_000,
};

function recordOf(lease: Lease | undefined): string {
  const s = lease?.spec ?? {};
  return `${s.holderIdentity ?? ''}|${s.renewTime ?? ''}|${s.leaseTransitions ?? 0}|${s.leaseDurationSeconds ?? 0}`;
}

export class LeaderElector {
  private readonly clock: Clock;
  private readonly namespace: string;
  private readonly leaseDurationMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private readonly informer: SharedIndexInformer<'Lease'>;
  private observedRecord = '';
  private observedTime = 0;
  private observedHolder = '';
  private leading = false;
  private lastRenew = 0;
  private stopped = false;
  private readonly sleeper: Sleeper;
  private loop: Promise<void> | undefined;

  constructor(private readonly options: LeaderElectorOptions) {
    this.clock = options.clock ?? realClock;
    this.sleeper = new Sleeper(this.clock);
    this.namespace = options.namespace ?? 'kube-system';
    this.leaseDurationMs = options.leaseDurationMs ?? LEADER_ELECTION_DEFAULTS.leaseDurationMs;
    this.renewDeadlineMs = options.renewDeadlineMs ?? LEADER_ELECTION_DEFAULTS.renewDeadlineMs;
    this.retryPeriodMs = options.retryPeriodMs ?? LEADER_ELECTION_DEFAULTS.retryPeriodMs;
    if (this.renewDeadlineMs >= this.leaseDurationMs)
      throw new Error('the renew deadline must be shorter than the lease duration');
    this.informer = new SharedIndexInformer({
      client: options.client,
      kind: 'Lease',
      namespace: this.namespace,
      fieldSelector: `metadata.name=${options.name}`,
      clock: this.clock,
    });
    const observe = (lease: Lease) => this.observe(lease);
    this.informer.addEventHandler({ onAdd: observe, onUpdate: (_o, n) => observe(n) });
  }

  /** Leading, and renewed recently enough to be sure of it. */
  isLeader(): boolean {
    return this.leading && this.clock.now() - this.lastRenew < this.renewDeadlineMs;
  }

  /** The identity currently holding the lease, as last observed. */
  get leader(): string {
    return this.observedHolder;
  }

  run(): Promise<void> {
    if (!this.loop) {
      this.informer.run();
      this.loop = this.runLoop();
    }
    return this.loop;
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.sleeper.stop();
    await this.loop;
    if (this.leading) {
      this.leading = false;
      if (this.options.releaseOnStop ?? true) await this.release().catch(() => undefined);
      this.options.callbacks.onStoppedLeading();
    }
    this.informer.stop();
  }

  private observe(lease: Lease): void {
    const record = recordOf(lease);
    if (record === this.observedRecord) return;
    this.observedRecord = record;
    this.observedTime = this.clock.now();
    const holder = lease.spec?.holderIdentity ?? '';
    if (holder !== this.observedHolder) {
      this.observedHolder = holder;
      if (holder) this.options.callbacks.onNewLeader?.(holder);
    }
    // A new observation may move the moment the lease runs out: re-plan the next attempt.
    if (!this.leading) this.sleeper.wake();
  }

  private async runLoop(): Promise<void> {
    while (!this.stopped) {
      if (!this.leading) {
        if (await this.tryAcquireOrRenew()) {
          this.leading = true;
          this.options.callbacks.onStartedLeading();
          continue;
        }
        await this.sleeper.sleep(this.untilNextAttempt());
        continue;
      }
      await this.sleeper.sleep(this.retryPeriodMs);
      if (this.stopped) break;
      if (await this.tryAcquireOrRenew()) continue;
      if (
        this.observedHolder !== this.options.identity ||
        this.clock.now() - this.lastRenew >= this.renewDeadlineMs
      ) {
        // Someone else holds it, or we could not renew in time: stop acting now, before the
        // lease can run out and another candidate takes over.
        this.leading = false;
        this.options.callbacks.onStoppedLeading();
      }
    }
  }

  /** Wait until the observed holder's lease runs out, checking at least every retry period. */
  private untilNextAttempt(): number {
    const retry = jittered(this.retryPeriodMs, 0.2);
    if (!this.observedHolder || this.observedHolder === this.options.identity) return retry;
    const expiry = this.observedTime + this.leaseDurationMs - this.clock.now();
    return Math.max(0, Math.min(retry, expiry + 1));
  }

  private async tryAcquireOrRenew(): Promise<boolean> {
    const { client, name, identity } = this.options;
    const now = this.clock.now();
    const spec = (holderIdentity: string, transitions: number, acquireTime: string) => ({
      holderIdentity,
      leaseDurationSeconds: Math.ceil(this.leaseDurationMs / 1000),
      acquireTime,
      renewTime: rfc3339Micro(now),
      leaseTransitions: transitions,
    });
    try {
      let lease: Lease;
      try {
        lease = await client.get('Lease', name, { namespace: this.namespace });
      } catch (err) {
        if (!isNotFound(err)) throw err;
        const created = await client.create<Lease>({
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: { name, namespace: this.namespace },
          spec: spec(identity, 0, rfc3339Micro(now)),
        });
        this.observe(created);
        this.lastRenew = now;
        return true;
      }
      this.observe(lease);
      const holder = lease.spec?.holderIdentity ?? '';
      const expired = this.observedTime + (lease.spec?.leaseDurationSeconds ?? 0) * 1000 <= this.clock.now();
      if (holder && holder !== identity && !expired) return false;
      const mine = holder === identity;
      const transitions = (lease.spec?.leaseTransitions ?? 0) + (mine ? 0 : 1);
      const updated = await client.update<Lease>({
        ...lease,
        spec: spec(
          identity,
          transitions,
          mine ? (lease.spec?.acquireTime ?? rfc3339Micro(now)) : rfc3339Micro(now),
        ),
      });
      this.observe(updated);
      this.lastRenew = now;
      return true;
    } catch {
      // A conflict (someone else wrote first) or an unreachable server: not this time.
      return false;
    }
  }

  /** Hands the lease back: an empty holder lets the next candidate take it at once. */
  private async release(): Promise<void> {
    const lease = await this.options.client.get('Lease', this.options.name, { namespace: this.namespace });
    if (lease.spec?.holderIdentity !== this.options.identity) return;
    await this.options.client.update<Lease>({
      ...lease,
      spec: {
        ...lease.spec,
        holderIdentity: '',
        leaseDurationSeconds: 1,
        renewTime: rfc3339Micro(this.clock.now()),
      },
    });
  }
}

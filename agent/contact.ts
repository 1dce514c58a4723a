/**
 * Whether the agent reaches its control plane, told once per outage. Every loop of the agent
 * (status, lease, metrics, informers, pod statuses, the log tunnel) retries on its own while
 * the control plane is away; left to themselves they would each warn at every retry, about
 * one line a second. Instead the first failure to reach it is logged here — what failed, and
 * that the agent keeps trying — the loops log their own retries at debug, and the first call
 * that gets through again ends the outage with one line saying how long it lasted. Whoever
 * waits for the control plane (the log tunnel's next try) is told at that moment.
 */
import { ApiError } from '../client/api/errors.js';
import type { Clock } from '../client/util/clock.js';
import type { Logger } from './logger.js';

export interface ControlPlaneContactOptions {
  /** The control plane's addresses, for the log lines. */
  servers: string[];
  logger: Logger;
  clock: Clock;
}

/** A failure that says the control plane could not be reached (not that it refused something). */
export function isUnreachable(err: unknown): boolean {
  return err instanceof ApiError && (err.reason === 'Unavailable' || err.reason === 'Timeout');
}

export class ControlPlaneContact {
  /** When the current outage began; undefined while the control plane answers. */
  private awaySince: number | undefined;
  /** Counts outages' starts and ends: a call's report counts only if none happened since it began. */
  private changes = 0;
  /** Failures of calls that were out while an outage ended: logged with it, at debug. */
  private readonly explained = new WeakSet<ApiError>();
  private readonly restoredListeners: Array<() => void> = [];

  constructor(private readonly options: ControlPlaneContactOptions) {}

  /** The control plane is away (the last call could not reach it). */
  get away(): boolean {
    return this.awaySince !== undefined;
  }

  /**
   * A mark to pass back with a call's outcome (`since`): a call that was on its way when an
   * outage began or ended says nothing about the state since — a status write answered while
   * the server shuts down does not end the outage its lease renewal just began, and a call
   * stuck since before the control plane came back does not start a new one.
   */
  mark(): number {
    return this.changes;
  }

  /** A call failed: the first failure to reach the control plane starts an outage (logged once). */
  failed(err: unknown, since?: number): void {
    if (!isUnreachable(err)) return;
    if (this.awaySince !== undefined || this.stale(since)) {
      // Part of an outage already told (this one, or one that ended while the call was out).
      this.explained.add(err as ApiError);
      return;
    }
    this.awaySince = this.options.clock.now();
    this.changes++;
    this.options.logger.warn(
      { servers: this.options.servers, err: (err as Error).message },
      'lost contact with the control plane; the pods keep running, and the agent keeps trying to reach it (with back-off, up to 30 s apart) until it answers',
    );
  }

  /** A call got an answer (any answer: a refusal comes from a control plane that is there). */
  succeeded(since?: number): void {
    if (this.awaySince === undefined || this.stale(since)) return;
    const awayMs = this.options.clock.now() - this.awaySince;
    this.awaySince = undefined;
    this.changes++;
    this.options.logger.info(
      { servers: this.options.servers, awayMs },
      `the control plane answers again after ${formatDuration(awayMs)} away; status, lease and pod statuses catch up now`,
    );
    for (const listener of this.restoredListeners) listener();
  }

  /** Reports `err` through a call, as `failed` or `succeeded` (an error the control plane sent back). */
  observe(err: unknown, since?: number): void {
    if (isUnreachable(err)) this.failed(err, since);
    else if (err instanceof ApiError) this.succeeded(since);
  }

  private stale(since: number | undefined): boolean {
    return since !== undefined && since !== this.changes;
  }

  /**
   * Whether `err` is part of the outage already logged here: its caller then logs it at debug
   * only (the outage's start and end are the lines a person needs).
   */
  explains(err: unknown): boolean {
    return isUnreachable(err) && (this.away || this.explained.has(err as ApiError));
  }

  /** Runs `listener` each time an outage ends. */
  onRestored(listener: () => void): void {
    this.restoredListeners.push(listener);
  }
}

/** "4 s", "2 min 5 s", "1 h 3 min": how long an outage lasted, as a person reads it. */
export function formatDuration(ms: number): string {
  const seconds = Math.round(ms / 1000);
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return seconds % 60 ? `${minutes} min ${seconds % 60} s` : `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  return minutes % 60 ? `${hours} h ${minutes % 60} min` : `${hours} h`;
}

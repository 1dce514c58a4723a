/**
 * Runs each request a client sends in a seat of its priority level (levels.ts), or queues it
 * fairly — one request of each waiting flow in turn, so one busy client cannot starve another
 * of the same level — or refuses it with TooManyRequests and a retry hint when the level's
 * queue is full or the wait too long. Nothing of a refused request has been done, so every
 * client may send it again (the typed client does, after the hint).
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { ApiError } from '../../../client/api/errors.js';
import type { Identity } from '../../../client/api/local.js';
import { realClock, type Clock, type TimerHandle } from '../../../client/util/clock.js';
import {
  classify,
  DEFAULT_FLOW_CONTROL,
  type FlowControlConfig,
  type PriorityLevel,
  type PriorityLevelName,
} from './levels.js';
import { HEARTBEAT_BOUNDS, LOOP_DELAY_BOUNDS, shedSeats } from './shedding.js';

/**
 * What a refused client is told to wait before it tries again: about as long as the requests
 * queued ahead of it take to drain at the rate the level has been finishing them, within these
 * bounds (1 s when there is no rate yet, as Kubernetes always says). A fleet restarting at once
 * told "1 s" comes back as one wave every second, and refusing those waves is most of what the
 * server then does; told when its turn is likely, it spreads itself over the backlog.
 */
const MIN_RETRY_AFTER_SECONDS = 1;
const MAX_RETRY_AFTER_SECONDS = 10;
/** Completions while requests wait are counted over windows of about this long. */
const DRAIN_WINDOW_MS = 1000;

interface Waiter {
  flow: string;
  admit(): void;
  timer: TimerHandle;
}

class Level {
  executing = 0;
  queued = 0;
  /** Seats it has now: its nominal seats, fewer while it sheds load (shedding.ts). */
  limit: number;
  /** Waiting requests per flow, and the flows in the order they get their next turn. */
  readonly flows = new Map<string, Waiter[]>();
  readonly turns: string[] = [];
  /** This sample's slowest finished request (arrival to answer, ms), how many finished, and whether one was refused. */
  private slowestInSample = 0;
  private doneInSample = 0;
  private refusedInSample = false;
  /** Requests finished per second while others waited (smoothed); 0 until measured. */
  private drainRate = 0;
  private windowStart = 0;
  private windowDone = 0;

  constructor(
    readonly name: PriorityLevelName,
    readonly config: PriorityLevel,
  ) {
    this.limit = config.seats;
  }

  enqueue(w: Waiter): void {
    const queue = this.flows.get(w.flow);
    if (queue) queue.push(w);
    else {
      this.flows.set(w.flow, [w]);
      this.turns.push(w.flow);
    }
    this.queued++;
  }

  /** The next waiter, taking flows in turn. */
  next(): Waiter | undefined {
    const flow = this.turns.shift();
    if (flow === undefined) return undefined;
    const queue = this.flows.get(flow)!;
    const w = queue.shift()!;
    if (queue.length) this.turns.push(flow);
    else this.flows.delete(flow);
    this.queued--;
    return w;
  }

  /** A request finished at `now`; only busy stretches (someone waiting) say how fast the queue drains. */
  finished(now: number): void {
    if (this.queued === 0) {
      this.windowDone = 0;
      return;
    }
    if (this.windowDone === 0) this.windowStart = now;
    this.windowDone++;
    const elapsed = now - this.windowStart;
    if (elapsed < DRAIN_WINDOW_MS) return;
    const rate = ((this.windowDone - 1) * 1000) / elapsed;
    this.drainRate = this.drainRate ? (this.drainRate + rate) / 2 : rate;
    this.windowStart = now;
    this.windowDone = 1;
  }

  /** A request was refused (its queue full, or its wait too long). */
  refused(): void {
    this.refusedInSample = true;
  }

  /** A request finished `tookMs` after it arrived. */
  took(tookMs: number): void {
    this.doneInSample++;
    if (tookMs > this.slowestInSample) this.slowestInSample = tookMs;
  }

  /**
   * How slow its requests were in the sample just ended (ms), and a new sample begins: a refusal,
   * a request waiting for a seat, or requests running with none finished count as without end.
   */
  endSample(): number {
    const stuck = this.refusedInSample || this.queued > 0 || (this.executing > 0 && this.doneInSample === 0);
    const slowest = stuck ? Infinity : this.slowestInSample;
    this.slowestInSample = 0;
    this.doneInSample = 0;
    this.refusedInSample = false;
    return slowest;
  }

  /** Seconds until the requests queued now have likely drained. */
  retryAfterSeconds(): number {
    if (!this.drainRate) return MIN_RETRY_AFTER_SECONDS;
    const seconds = Math.ceil((this.queued + 1) / this.drainRate);
    return Math.min(MAX_RETRY_AFTER_SECONDS, Math.max(MIN_RETRY_AFTER_SECONDS, seconds));
  }

  remove(w: Waiter): void {
    const queue = this.flows.get(w.flow);
    const at = queue?.indexOf(w) ?? -1;
    if (!queue || at < 0) return;
    queue.splice(at, 1);
    this.queued--;
    if (queue.length) return;
    this.flows.delete(w.flow);
    this.turns.splice(this.turns.indexOf(w.flow), 1);
  }
}

export class FlowControl {
  private readonly levels = new Map<PriorityLevelName, Level>();
  private readonly executing = new Gauge({
    name: 'apiserver_flowcontrol_current_executing_requests',
    help: 'Requests running in a seat of their priority level',
    labelNames: ['priority_level'],
    registers: [],
  });
  private readonly inqueue = new Gauge({
    name: 'apiserver_flowcontrol_current_inqueue_requests',
    help: 'Requests waiting for a seat of their priority level',
    labelNames: ['priority_level'],
    registers: [],
  });
  private readonly limitSeats = new Gauge({
    name: 'apiserver_flowcontrol_current_limit_seats',
    help: 'Seats a priority level has now: its nominal seats, fewer while the event loop lags and the level sheds load',
    labelNames: ['priority_level'],
    registers: [],
  });
  private readonly rejected = new Counter({
    name: 'apiserver_flowcontrol_rejected_requests_total',
    help: 'Requests refused with TooManyRequests, by priority level and why (queue-full, time-out)',
    labelNames: ['priority_level', 'reason'],
    registers: [],
  });
  private readonly waited = new Histogram({
    name: 'apiserver_flowcontrol_request_wait_duration_seconds',
    help: 'How long requests waited for a seat, by priority level and whether they then ran',
    labelNames: ['priority_level', 'execute'],
    buckets: [0, 0.005, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30],
    registers: [],
  });
  // Kubernetes' name and buckets: with the wait above, what a request cost the server, so a
  // client's latency can be told from the server's.
  private readonly executed = new Histogram({
    name: 'apiserver_flowcontrol_request_execution_seconds',
    help: 'How long requests ran once they had a seat, by priority level',
    labelNames: ['priority_level'],
    buckets: [0, 0.005, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30],
    registers: [],
  });

  /**
   * `clock` times the queue's waits; `stopwatch` how long requests took for the levels that yield
   * to others: the server's real responsiveness, whatever clock the control plane keeps (as
   * the loop's delay is).
   */
  constructor(
    config: FlowControlConfig = DEFAULT_FLOW_CONTROL,
    private readonly clock: Clock = realClock,
    private readonly stopwatch: Clock = realClock,
  ) {
    for (const [name, level] of Object.entries(config) as Array<[PriorityLevelName, PriorityLevel]>) {
      this.levels.set(name, new Level(name, level));
      this.executing.set({ priority_level: name }, 0);
      this.inqueue.set({ priority_level: name }, 0);
      this.limitSeats.set({ priority_level: name }, level.seats);
    }
  }

  /**
   * A sample ended, with the event loop's delay p99 over it (shedding.ts): levels that shed
   * under load, or yield to another level whose requests were slow in it, give up or take back
   * seats. Taken-back seats go to waiting requests at once.
   */
  onLoopDelay(p99Ms: number): void {
    const slowest = new Map<PriorityLevelName, number>();
    for (const level of this.levels.values()) slowest.set(level.name, level.endSample());
    for (const level of this.levels.values()) {
      const { shedUnderLoad, yieldsTo } = level.config;
      let limit = level.limit;
      if (shedUnderLoad) limit = shedSeats(limit, level.config.seats, p99Ms, LOOP_DELAY_BOUNDS);
      else if (yieldsTo)
        limit = shedSeats(limit, level.config.seats, slowest.get(yieldsTo)!, HEARTBEAT_BOUNDS);
      if (limit === level.limit) continue;
      level.limit = limit;
      this.limitSeats.set({ priority_level: level.name }, limit);
      this.admitWaiting(level);
    }
  }

  registerMetrics(registry: Registry): void {
    const metrics = {
      apiserver_flowcontrol_current_executing_requests: this.executing,
      apiserver_flowcontrol_current_inqueue_requests: this.inqueue,
      apiserver_flowcontrol_current_limit_seats: this.limitSeats,
      apiserver_flowcontrol_rejected_requests_total: this.rejected,
      apiserver_flowcontrol_request_wait_duration_seconds: this.waited,
      apiserver_flowcontrol_request_execution_seconds: this.executed,
    };
    for (const [name, metric] of Object.entries(metrics))
      if (!registry.getSingleMetric(name)) registry.registerMetric(metric);
  }

  /** Runs `work` in a seat of the caller's level for a request about `kind`, once one is free. */
  async run<T>(id: Identity, work: () => Promise<T>, kind?: string): Promise<T> {
    const { level: name, flow } = classify(id, kind);
    const level = this.levels.get(name)!;
    const arrived = this.stopwatch.now();
    await this.seat(level, flow);
    const started = this.clock.now();
    try {
      return await work();
    } finally {
      this.executed.observe({ priority_level: name }, (this.clock.now() - started) / 1000);
      level.took(this.stopwatch.now() - arrived);
      this.release(level);
    }
  }

  /** Requests running and waiting now, and the seats each level has, per level (for tests and the bench). */
  snapshot(): Record<PriorityLevelName, { executing: number; queued: number; seats: number }> {
    const out = {} as Record<PriorityLevelName, { executing: number; queued: number; seats: number }>;
    for (const [name, l] of this.levels)
      out[name] = { executing: l.executing, queued: l.queued, seats: l.limit };
    return out;
  }

  private seat(level: Level, flow: string): Promise<void> {
    // Label objects written out, not spread: in Node 20's V8 a spread that adds a key makes a
    // hidden class per call, which lives until the next mark-compact clears it.
    const labels = { priority_level: level.name };
    if (level.executing < level.limit && level.queued === 0) {
      this.take(level);
      this.waited.observe({ priority_level: level.name, execute: 'true' }, 0);
      return Promise.resolve();
    }
    if (level.queued >= level.config.queueLength) {
      level.refused();
      this.rejected.inc({ priority_level: level.name, reason: 'queue-full' });
      this.waited.observe({ priority_level: level.name, execute: 'false' }, 0);
      return Promise.reject(this.busy(level, 'its queue is full'));
    }
    const since = this.clock.now();
    return new Promise((resolve, reject) => {
      const w: Waiter = {
        flow,
        admit: () => {
          this.clock.clearTimeout(w.timer);
          this.waited.observe(
            { priority_level: level.name, execute: 'true' },
            (this.clock.now() - since) / 1000,
          );
          resolve();
        },
        timer: this.clock.setTimeout(() => {
          level.remove(w);
          level.refused();
          this.inqueue.set(labels, level.queued);
          this.rejected.inc({ priority_level: level.name, reason: 'time-out' });
          this.waited.observe(
            { priority_level: level.name, execute: 'false' },
            (this.clock.now() - since) / 1000,
          );
          reject(this.busy(level, `no seat came free within ${level.config.queueWaitMs / 1000} s`));
        }, level.config.queueWaitMs),
      };
      level.enqueue(w);
      this.inqueue.set(labels, level.queued);
    });
  }

  private take(level: Level): void {
    level.executing++;
    this.executing.set({ priority_level: level.name }, level.executing);
  }

  private release(level: Level): void {
    level.executing--;
    level.finished(this.clock.now());
    this.admitWaiting(level);
  }

  /** Gives the level's free seats to its waiting requests, flows in turn. */
  private admitWaiting(level: Level): void {
    while (level.executing < level.limit) {
      const w = level.next();
      if (!w) break;
      this.take(level);
      w.admit();
    }
    this.executing.set({ priority_level: level.name }, level.executing);
    this.inqueue.set({ priority_level: level.name }, level.queued);
  }

  private busy(level: Level, why: string): ApiError {
    // A refusal is an answer, not a fault: no stack is captured. Under a flood, capturing one for
    // each of thousands of refusals a second was a noticeable share of the server's CPU.
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      return this.refusal(level, why);
    } finally {
      Error.stackTraceLimit = limit;
    }
  }

  private refusal(level: Level, why: string): ApiError {
    const retryAfterSeconds = level.retryAfterSeconds();
    return new ApiError(
      'TooManyRequests',
      `the server is busy: ${level.executing} requests of priority level "${level.name}" are running and ${level.queued} waiting, and ${why}; nothing was done, so send the request again after ${retryAfterSeconds} s`,
      { retryAfterSeconds },
    );
  }
}

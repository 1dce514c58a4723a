/**
 * Container probes, as the kubelet runs them (pkg/probe and pkg/kubelet/prober): `runProbe`
 * performs one exec / httpGet / tcpSocket check, and `ProbeWorker` runs one probe of one
 * container on its schedule, turning raw results into the readiness / liveness / startup state
 * the pod manager acts on.
 *
 * A probe's own deadline (timeoutSeconds) runs on real timers: it bounds real I/O (a process,
 * a socket), which a fake clock could not make time out. The worker's schedule (initial delay,
 * period) runs on the injected Clock, so tests move time instead of sleeping.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { realClock, type Clock } from '../../client/util/clock.js';
import { Sleeper } from '../../client/util/sleeper.js';
import type {
  ContainerPort,
  ExecAction,
  HTTPGetAction,
  HTTPHeader,
  Probe,
  TCPSocketAction,
} from '../../proto/gen/kubelab/v1/core.js';

/** The outcome of one probe. */
export interface ProbeResult {
  result: 'success' | 'failure';
  /** What a person needs to see: the command's output, the HTTP status, the socket error. */
  message?: string;
  /**
   * Kubernetes' probe.Warning: counted as success, but worth an event ("ProbeWarning"): an
   * HTTP probe that ended on a redirect it did not follow (another host, or a 3xx without one).
   */
  warning?: boolean;
}

/** What a probe needs to know about its container. */
export interface ProbeTarget {
  /** Default host for httpGet/tcpSocket; process pods share the host network, so 127.0.0.1. */
  podIP?: string;
  /** The container's environment, as the runtime gives it (exec probes run with exactly this). */
  env: Record<string, string>;
  /** The container's working directory (exec probes run there). */
  cwd?: string;
  /** Resolves a named port (int-or-string `port: "http"`); takes precedence over `ports`. */
  resolvePort?: (name: string) => number | undefined;
  /** The container's ports, for named-port lookup when `resolvePort` is not given. */
  ports?: ContainerPort[];
}

export type ProbeKind = 'readiness' | 'liveness' | 'startup';
export type ProbeState = 'success' | 'failure' | 'unknown';

/** Runs one probe; the worker's seam for tests. */
export type Prober = (
  probe: Probe,
  target: ProbeTarget,
  timeoutMs: number,
  signal: AbortSignal,
) => Promise<ProbeResult>;

/** The kubelet's maxReadLength: exec output and HTTP bodies are read up to 10 KiB. */
export const PROBE_OUTPUT_LIMIT = 10 * 1024;

export const GRPC_UNSUPPORTED =
  'grpc probes are not supported by kubelab-agent; use httpGet, tcpSocket or exec';

/** The kubelet follows at most 10 redirects (Go's http.Client default). */
const MAX_REDIRECTS = 10;
/** The statuses Go's http.Client follows; others (300, 304) end the request as they are. */
const FOLLOWED_REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** The kubelet sends "kube-probe/<major>.<minor>"; apps that sniff for kube-probe still match. */
const USER_AGENT = 'kube-probe/kubelab';

// Kubernetes' defaults (SetDefaults_Probe) for fields left out or set to zero.
const DEFAULT_TIMEOUT_SECONDS = 1;
const DEFAULT_PERIOD_SECONDS = 10;
const DEFAULT_SUCCESS_THRESHOLD = 1;
const DEFAULT_FAILURE_THRESHOLD = 3;

function failure(message: string): ProbeResult {
  return { result: 'failure', message };
}

function positiveOr(value: number | undefined, fallback: number): number {
  return value !== undefined && Number.isFinite(value) && value > 0 ? value : fallback;
}

/** The probe's deadline in ms (timeoutSeconds, default 1 s). */
export function probeTimeoutMs(probe: Probe): number {
  return positiveOr(probe.timeoutSeconds, DEFAULT_TIMEOUT_SECONDS) * 1000;
}

/**
 * Runs one probe against a container. Never throws: every problem (bad port, refused
 * connection, missing command) is a failure with a message, as the kubelet reports it.
 * `timeoutMs` overrides timeoutSeconds; `signal` cancels the probe (killing an exec probe).
 */
export function runProbe(
  probe: Probe,
  target: ProbeTarget,
  timeoutMs?: number,
  signal?: AbortSignal,
): Promise<ProbeResult> {
  const timeout = timeoutMs ?? probeTimeoutMs(probe);
  if (signal?.aborted) return Promise.resolve(failure('probe cancelled'));
  // The kubelet's order: exec, httpGet, tcpSocket, grpc (validation allows only one).
  if (probe.exec) return execProbe(probe.exec, target, timeout, signal);
  if (probe.httpGet) return httpProbe(probe.httpGet, target, timeout, signal);
  if (probe.tcpSocket) return tcpProbe(probe.tcpSocket, target, timeout, signal);
  // Our Probe message has no grpc field; a probe object built from a Kubernetes manifest may
  // still carry one, and it must fail loudly rather than as a puzzling "missing handler".
  if ((probe as Probe & { grpc?: unknown }).grpc !== undefined) {
    return Promise.resolve(failure(GRPC_UNSUPPORTED));
  }
  return Promise.resolve(failure('missing probe handler (exec, httpGet or tcpSocket)'));
}

/**
 * Resolves an int-or-string probe port as the kubelet does: a number is taken as is; a string
 * names a container port, and failing that may be a number written as a string.
 */
export function resolveProbePort(
  port: unknown,
  target: Pick<ProbeTarget, 'resolvePort' | 'ports'>,
): { port: number } | { error: string } {
  let n: number;
  if (typeof port === 'number') {
    n = port;
  } else if (typeof port === 'string' && port !== '') {
    const named = target.resolvePort
      ? target.resolvePort(port)
      : target.ports?.find((p) => p.name === port)?.containerPort;
    if (named !== undefined) n = named;
    else if (/^\d+$/.test(port)) n = Number(port);
    else return { error: `port "${port}" not found in the container's ports` };
  } else {
    return { error: 'probe has no port' };
  }
  if (!Number.isInteger(n) || n < 1 || n > 65535) return { error: `invalid port number: ${n}` };
  return { port: n };
}

/** How one attempt ends early: the result to report on timeout, and what to tear down. */
interface AttemptHooks {
  onTimeout(): ProbeResult;
  cleanup(): void;
}

/**
 * One probe attempt that settles exactly once — on its own result, its deadline or the
 * caller's abort, whichever comes first — and tears down its process or socket either way.
 */
function attempt(
  timeoutMs: number,
  signal: AbortSignal | undefined,
  body: (finish: (r: ProbeResult) => void) => AttemptHooks,
): Promise<ProbeResult> {
  return new Promise((resolve) => {
    let settled = false;
    // A holder, not a variable: finish() may run inside body(), before its hooks exist.
    const current: { hooks?: AttemptHooks } = {};
    const finish = (r: ProbeResult): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      current.hooks?.cleanup();
      resolve(r);
    };
    const onAbort = (): void => finish(failure('probe cancelled'));
    const timer = setTimeout(
      () => finish(current.hooks ? current.hooks.onTimeout() : failure(`timed out after ${timeoutMs} ms`)),
      timeoutMs,
    );
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      current.hooks = body(finish);
    } catch (err) {
      // spawn() and friends throw on bad arguments (a NUL in env): still just a failed probe.
      finish(failure(err instanceof Error ? err.message : String(err)));
      return;
    }
    // The body may have finished synchronously, before its hooks existed to clean up.
    if (settled) current.hooks.cleanup();
  });
}

/** Collects output up to a cap and drops the rest (a chatty probe must not grow memory). */
class CappedOutput {
  private readonly chunks: Buffer[] = [];
  private size = 0;

  constructor(private readonly limit: number) {}

  get full(): boolean {
    return this.size >= this.limit;
  }

  push(chunk: Buffer): void {
    if (this.full) return;
    const part = chunk.subarray(0, this.limit - this.size);
    this.chunks.push(part);
    this.size += part.length;
  }

  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}

function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    // Negative pid: the whole process group, so `sh -c 'sleep 5'` takes its sleep with it.
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // Already gone (ESRCH): nothing left to kill.
  }
}

function execProbe(
  action: ExecAction,
  target: ProbeTarget,
  timeoutMs: number,
  signal: AbortSignal | undefined,
): Promise<ProbeResult> {
  const argv = action.command ?? [];
  if (argv.length === 0 || !argv[0]) return Promise.resolve(failure('exec probe has no command'));
  const shown = JSON.stringify(argv.join(' '));
  return attempt(timeoutMs, signal, (finish) => {
    const output = new CappedOutput(PROBE_OUTPUT_LIMIT);
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    let closed = false;
    const exitResult = (code: number | null, sig: NodeJS.Signals | null): ProbeResult => {
      const text = output.text().trim();
      if (code === 0) return text ? { result: 'success', message: text } : { result: 'success' };
      const how = sig ? `was killed by ${sig}` : `exited with code ${code}`;
      return failure(text || `command ${shown} ${how}`);
    };
    // argv, no shell, as the kubelet execs it; detached makes it a process-group leader, so a
    // timeout can kill everything it started.
    const child = spawn(argv[0], argv.slice(1), {
      env: target.env,
      cwd: target.cwd,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // stdout and stderr interleaved, as the kubelet captures CombinedOutput.
    child.stdout?.on('data', (c: Buffer) => output.push(c));
    child.stderr?.on('data', (c: Buffer) => output.push(c));
    child.on('error', (err) => finish(failure(`exec ${shown}: ${err.message}`)));
    child.on('exit', (code, sig) => {
      exit = { code, signal: sig };
    });
    // 'close' waits for the pipes too, so output written just before exit is not lost.
    child.on('close', (code, sig) => {
      closed = true;
      finish(exitResult(code, sig));
    });
    return {
      // Exited but something it started still holds the pipes: the exit code is the answer.
      onTimeout: () => (exit ? exitResult(exit.code, exit.signal) : failure(`command ${shown} timed out`)),
      cleanup: () => {
        // After 'close' the group may be gone and its id reused: only kill while it is ours.
        if (!closed) killGroup(child);
        child.stdout?.destroy();
        child.stderr?.destroy();
      },
    };
  });
}

/** Formats host:port for messages and URLs (IPv6 in brackets). */
function hostPort(host: string, port: number): string {
  return net.isIPv6(host) ? `[${host}]:${port}` : `${host}:${port}`;
}

/** Request headers: the probe's own, plus the kubelet's User-Agent and Accept unless given. */
function probeHeaders(list: HTTPHeader[] | undefined): Record<string, string | string[]> {
  const byName = new Map<string, { name: string; values: string[] }>();
  for (const h of list ?? []) {
    if (!h.name) continue;
    const key = h.name.toLowerCase();
    const entry = byName.get(key) ?? { name: h.name, values: [] };
    entry.values.push(h.value ?? '');
    byName.set(key, entry);
  }
  if (!byName.has('user-agent')) byName.set('user-agent', { name: 'User-Agent', values: [USER_AGENT] });
  const accept = byName.get('accept');
  if (!accept) byName.set('accept', { name: 'Accept', values: ['*/*'] });
  // The kubelet's way to send no Accept at all: an explicit empty one.
  else if (accept.values.every((v) => v === '')) byName.delete('accept');
  const headers: Record<string, string | string[]> = {};
  for (const { name, values } of byName.values()) {
    headers[name] = values.length === 1 ? values[0] : values;
  }
  return headers;
}

function httpProbe(
  action: HTTPGetAction,
  target: ProbeTarget,
  timeoutMs: number,
  signal: AbortSignal | undefined,
): Promise<ProbeResult> {
  const scheme = (action.scheme || 'HTTP').toUpperCase();
  if (scheme !== 'HTTP' && scheme !== 'HTTPS') {
    return Promise.resolve(failure(`unsupported HTTP probe scheme "${action.scheme}"`));
  }
  const resolved = resolveProbePort(action.port, target);
  if ('error' in resolved) return Promise.resolve(failure(resolved.error));
  const host = action.host || target.podIP || '127.0.0.1';
  let url: URL;
  try {
    // Path and query set separately, so a path like "//other/x" cannot change the host.
    url = new URL(`${scheme.toLowerCase()}://${hostPort(host, resolved.port)}`);
    const path = action.path || '/';
    const q = path.indexOf('?');
    url.pathname = (q < 0 ? path : path.slice(0, q)) || '/';
    if (q >= 0) url.search = path.slice(q);
  } catch {
    return Promise.resolve(failure(`invalid HTTP probe address ${hostPort(host, resolved.port)}`));
  }
  const headers = probeHeaders(action.httpHeaders);
  const startHost = url.hostname;
  return attempt(timeoutMs, signal, (finish) => {
    let current = url;
    let req: http.ClientRequest | undefined;
    let res: http.IncomingMessage | undefined;
    const get = (u: URL, redirects: number): void => {
      current = u;
      const onResponse = (r: http.IncomingMessage): void => {
        res = r;
        const status = r.statusCode ?? 0;
        const location = r.headers.location;
        if (FOLLOWED_REDIRECTS.has(status) && location) {
          let next: URL | undefined;
          try {
            next = new URL(location, u);
          } catch {
            next = undefined;
          }
          // The kubelet follows redirects to the same host only; elsewhere it stops and
          // reports the redirect itself (a warning below).
          if (next && next.hostname === startHost) {
            r.resume();
            if (next.protocol !== 'http:' && next.protocol !== 'https:') {
              finish(failure(`Get "${next.href}": unsupported protocol scheme`));
            } else if (redirects >= MAX_REDIRECTS) {
              finish(failure(`Get "${next.href}": stopped after ${MAX_REDIRECTS} redirects`));
            } else {
              get(next, redirects + 1);
            }
            return;
          }
        }
        const body = new CappedOutput(PROBE_OUTPUT_LIMIT);
        const done = (): void => finish(statusResult(status, body.text()));
        r.on('data', (c: Buffer) => {
          body.push(c);
          // The kubelet reads at most 10 KiB; an endless body must not hold the probe.
          if (body.full) done();
        });
        r.on('end', done);
        r.on('error', (err) => finish(failure(`Get "${u.href}": ${err.message}`)));
      };
      // agent: false: a fresh connection each time, as the kubelet disables keep-alives, so
      // a probe sees a server that stopped accepting connections.
      req =
        u.protocol === 'https:'
          ? https.request(u, { headers, agent: false, rejectUnauthorized: false }, onResponse)
          : http.request(u, { headers, agent: false }, onResponse);
      req.on('error', (err) => finish(failure(`Get "${u.href}": ${err.message}`)));
      req.end();
    };
    get(url, 0);
    return {
      onTimeout: () =>
        failure(`Get "${current.href}": timed out after ${timeoutMs} ms awaiting the response`),
      cleanup: () => {
        res?.destroy();
        req?.destroy();
      },
    };
  });
}

/** The kubelet's DoHTTPProbe verdict: 2xx success, 3xx success with a warning, else failure. */
function statusResult(status: number, body: string): ProbeResult {
  if (status >= 200 && status < 300) return { result: 'success' };
  if (status >= 300 && status < 400) {
    return {
      result: 'success',
      warning: true,
      message: `Probe terminated redirects, Response body: ${body}`,
    };
  }
  return failure(`HTTP probe failed with statuscode: ${status}`);
}

function tcpProbe(
  action: TCPSocketAction,
  target: ProbeTarget,
  timeoutMs: number,
  signal: AbortSignal | undefined,
): Promise<ProbeResult> {
  const resolved = resolveProbePort(action.port, target);
  if ('error' in resolved) return Promise.resolve(failure(resolved.error));
  const host = action.host || target.podIP || '127.0.0.1';
  const where = hostPort(host, resolved.port);
  return attempt(timeoutMs, signal, (finish) => {
    const socket = net.connect({ host, port: resolved.port });
    // Connected is all the kubelet asks; the socket is closed straight away.
    socket.once('connect', () => finish({ result: 'success' }));
    socket.once('error', (err) => finish(failure(`dial tcp ${where}: ${err.message}`)));
    return {
      onTimeout: () => failure(`dial tcp ${where}: i/o timeout after ${timeoutMs} ms`),
      cleanup: () => socket.destroy(),
    };
  });
}

export interface ProbeWorkerOptions {
  kind: ProbeKind;
  probe: Probe;
  target: ProbeTarget;
  /**
   * Called with the initial state when the worker starts (readiness: failure, liveness:
   * success, startup: unknown), then on every change; `last` is the result that caused it.
   */
  onChange: (state: ProbeState, last?: ProbeResult) => void;
  /** Every probe's raw result, e.g. for the kubelet's "Unhealthy" / "ProbeWarning" events. */
  onResult?: (result: ProbeResult) => void;
  /** Errors thrown by the callbacks (they never stop the worker). */
  onError?: (err: unknown) => void;
  clock?: Clock;
  /** When the container started, clock ms: initialDelaySeconds counts from here (default: start()). */
  startedAt?: number;
  /** How a probe is run (default runProbe); tests inject results. */
  prober?: Prober;
}

/** The state a container's probe has before any probe ran, as the kubelet initialises it. */
export function initialProbeState(kind: ProbeKind): ProbeState {
  // Not ready until proven ready; alive until proven dead; started: not known yet.
  if (kind === 'readiness') return 'failure';
  if (kind === 'liveness') return 'success';
  return 'unknown';
}

/**
 * Kubernetes' prober worker: one probe of one container instance. After the initial delay it
 * probes every period and flips its state once failureThreshold consecutive failures (or
 * successThreshold consecutive successes) are seen. Like the kubelet it stops probing once a
 * liveness/startup probe has failed (the container is to be restarted: the pod manager starts
 * a new worker for the new instance) and once a startup probe has succeeded.
 */
export class ProbeWorker {
  readonly kind: ProbeKind;
  readonly periodMs: number;
  readonly initialDelayMs: number;
  readonly timeoutMs: number;
  readonly successThreshold: number;
  readonly failureThreshold: number;

  private readonly clock: Clock;
  private readonly sleeper: Sleeper;
  private readonly prober: Prober;
  private readonly abort = new AbortController();
  /** Settles on stop(), so the loop need not wait for a probe that ignores its signal. */
  private readonly halted: Promise<void>;
  private halt: () => void = () => undefined;
  private current: ProbeState;
  private lastResult: 'success' | 'failure' | undefined;
  private run = 0;
  private started = false;
  private stopped = false;
  /** Probing is over for this container instance (liveness/startup failed, startup succeeded). */
  private finished = false;
  private inFlight: Promise<ProbeState> | undefined;
  private loop: Promise<void> | undefined;

  constructor(private readonly opts: ProbeWorkerOptions) {
    const p = opts.probe;
    this.kind = opts.kind;
    this.clock = opts.clock ?? realClock;
    this.sleeper = new Sleeper(this.clock);
    this.prober = opts.prober ?? runProbe;
    this.periodMs = positiveOr(p.periodSeconds, DEFAULT_PERIOD_SECONDS) * 1000;
    this.initialDelayMs = Math.max(0, p.initialDelaySeconds ?? 0) * 1000;
    this.timeoutMs = probeTimeoutMs(p);
    this.failureThreshold = positiveOr(p.failureThreshold, DEFAULT_FAILURE_THRESHOLD);
    // API validation requires 1 for liveness and startup; a worker can only enforce it.
    this.successThreshold =
      opts.kind === 'readiness' ? positiveOr(p.successThreshold, DEFAULT_SUCCESS_THRESHOLD) : 1;
    this.current = initialProbeState(opts.kind);
    this.halted = new Promise((resolve) => {
      this.halt = resolve;
    });
  }

  /** The current state (what onChange last reported). */
  get state(): ProbeState {
    return this.current;
  }

  /** Whether it will probe again (started, not stopped, not finished). */
  get active(): boolean {
    return this.started && !this.stopped && !this.finished;
  }

  /** Reports the initial state and starts probing. Calling it again does nothing. */
  start(): void {
    if (this.started || this.stopped) return;
    this.started = true;
    this.notify(() => this.opts.onChange(this.current));
    this.loop = this.runLoop().catch((err: unknown) => this.notify(() => this.opts.onError?.(err)));
  }

  /**
   * Probes now and applies the result; resolves with the state after it. While a probe is
   * running it returns that probe's outcome instead of starting another.
   */
  probeNow(): Promise<ProbeState> {
    if (!this.inFlight) {
      this.inFlight = this.probeAndRecord().finally(() => {
        this.inFlight = undefined;
      });
    }
    return this.inFlight;
  }

  /** Stops probing at once (cancelling a running probe); no callback fires afterwards. */
  stop(): Promise<void> {
    this.stopped = true;
    this.sleeper.stop();
    this.abort.abort();
    this.halt();
    return this.loop ?? Promise.resolve();
  }

  private async runLoop(): Promise<void> {
    const startedAt = this.opts.startedAt ?? this.clock.now();
    const delay = startedAt + this.initialDelayMs - this.clock.now();
    if (delay > 0) await this.sleeper.sleep(delay);
    while (!this.stopped && !this.finished) {
      const began = this.clock.now();
      await Promise.race([this.probeNow(), this.halted]);
      if (this.stopped || this.finished) break;
      // Periods count from probe start, so slow probes do not stretch the schedule; a probe
      // longer than a period is followed straight away, never overlapped.
      const wait = began + this.periodMs - this.clock.now();
      if (wait > 0) await this.sleeper.sleep(wait);
    }
  }

  private async probeAndRecord(): Promise<ProbeState> {
    if (this.stopped || this.finished) return this.current;
    let result: ProbeResult;
    try {
      result = await this.prober(this.opts.probe, this.opts.target, this.timeoutMs, this.abort.signal);
    } catch (err) {
      // A prober that throws is a failed probe, as an error is in the kubelet.
      result = failure(err instanceof Error ? err.message : String(err));
    }
    if (this.stopped) return this.current;
    this.notify(() => this.opts.onResult?.(result));
    this.record(result);
    return this.current;
  }

  /** The kubelet's threshold logic (worker.doProbe). */
  private record(result: ProbeResult): void {
    if (result.result === this.lastResult) {
      this.run++;
    } else {
      this.lastResult = result.result;
      this.run = 1;
    }
    const threshold = result.result === 'failure' ? this.failureThreshold : this.successThreshold;
    if (this.run < threshold) return;
    if (this.current !== result.result) {
      this.current = result.result;
      this.notify(() => this.opts.onChange(result.result, result));
    }
    const restartDue = result.result === 'failure' && this.kind !== 'readiness';
    const startupDone = result.result === 'success' && this.kind === 'startup';
    if (restartDue || startupDone) {
      this.finished = true;
      this.run = 0;
      this.sleeper.stop();
    }
  }

  private notify(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      // A callback's bug must not end probing for the container.
      if (this.opts.onError) {
        try {
          this.opts.onError(err);
        } catch {
          // Nowhere left to report it.
        }
      }
    }
  }
}

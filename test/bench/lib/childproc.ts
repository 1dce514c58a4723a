/**
 * Node child processes of the benchmarks (a server, a controller-manager, hollow agents, helper
 * scripts): started with `node`, their stdout tail kept, their pino log lines at warn or above
 * counted by message, the moment a line says they are up noted, and stopped with SIGTERM then
 * SIGKILL after a grace period.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { REPO_ROOT } from './child.js';
import { nowMs } from './stats.js';

const STOP_GRACE_MS = 10_000;

export interface Proc {
  name: string;
  child: ChildProcess;
  pid: number;
  /** The line that says it is up was printed (ms, this process's clock). */
  upAt?: number;
  exit?: { code: number | null; signal: NodeJS.Signals | null };
  exited: Promise<void>;
  /** Log lines at warn or above, by message. */
  problems: Map<string, number>;
  tail: string;
  /** Called once, when the line that says it is up arrives. */
  onUp?: () => void;
  stop(): Promise<void>;
}

/** A child whose stdout line matching `up` says it is running; stderr is pino JSON (or a crash). */
export function startProc(name: string, args: string[], up: RegExp, env: Record<string, string> = {}): Proc {
  const child = spawn(process.execPath, args, {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, KUBELAB_LOG_LEVEL: 'warn', ...env },
  });
  const proc: Proc = {
    name,
    child,
    pid: child.pid ?? 0,
    exited: Promise.resolve(),
    problems: new Map(),
    tail: '',
    async stop() {
      if (proc.exit) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
      await proc.exited;
      clearTimeout(timer);
    },
  };
  proc.exited = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      proc.exit = { code, signal };
      resolve();
    });
    child.once('error', (err) => {
      proc.tail += `\n${err.message}`;
      proc.exit ??= { code: null, signal: null };
      resolve();
    });
  });
  child.stdout?.on('data', (d: Buffer) => {
    const text = d.toString();
    proc.tail = (proc.tail + text).slice(-4000);
    if (proc.upAt === undefined && up.test(proc.tail)) {
      proc.upAt = nowMs();
      proc.onUp?.();
    }
  });
  let partial = '';
  child.stderr?.on('data', (d: Buffer) => {
    const text = partial + d.toString();
    const cut = text.lastIndexOf('\n');
    partial = text.slice(cut + 1);
    if (cut < 0) return;
    const complete = text.slice(0, cut);
    proc.tail = (proc.tail + complete + '\n').slice(-4000);
    for (const line of complete.split('\n')) {
      if (!line.trim()) continue;
      let key: string;
      try {
        const j = JSON.parse(line) as { level?: number; msg?: string; err?: unknown };
        if ((j.level ?? 0) < 40) continue;
        // The error's first words tell one failure from another (without ids, names or numbers).
        const err =
          typeof j.err === 'string'
            ? j.err
                .replace(/"[^"]*"/g, '"…"')
                .replace(/\d+(\.\d+)?/g, 'N')
                .slice(0, 100)
            : '';
        key = `${(j.level ?? 0) >= 50 ? 'error' : 'warn'}: ${j.msg ?? ''}${err ? ` (${err})` : ''}`;
      } catch {
        key = `stderr: ${line.slice(0, 120)}`;
      }
      proc.problems.set(key, (proc.problems.get(key) ?? 0) + 1);
    }
  });
  return proc;
}

export function checkAlive(procs: Proc[]): void {
  for (const p of procs)
    if (p.exit)
      throw new Error(
        `${p.name} exited (code ${p.exit.code}, signal ${p.exit.signal}): ${p.tail.slice(-1500)}`,
      );
}

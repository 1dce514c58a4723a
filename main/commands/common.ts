/** Small helpers shared by the `kubelab` commands. */
import { InvalidArgumentError } from 'commander';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { splitHostPort } from '../grpc/server.js';

export { VERSION } from '../version.js';

export function defaultDataDir(): string {
  return process.env.KUBELAB_DATA_DIR ?? join(homedir(), '.kubelab', 'server');
}

/** commander argument parser for host:port options. */
export function listenArg(v: string): string {
  try {
    splitHostPort(v);
  } catch (err) {
    throw new InvalidArgumentError((err as Error).message);
  }
  return v;
}

export function splitList(v: string | undefined): string[] {
  return (v ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** Stops `stop` on SIGINT/SIGTERM, once, and exits with its outcome. */
export function onSignals(stop: (signal: string) => Promise<void>): void {
  let stopping = false;
  const handler = (signal: string) => {
    if (stopping) return;
    stopping = true;
    stop(signal).then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGINT', () => handler('SIGINT'));
  process.on('SIGTERM', () => handler('SIGTERM'));
}

/** "24h", "30m", "7d", "90s" or plain seconds. */
export function parseDuration(v: string): number {
  const m = /^(\d+)(s|m|h|d)?$/.exec(v.trim());
  if (!m) throw new InvalidArgumentError(`"${v}" is not a duration: use e.g. 90s, 30m, 24h or 7d`);
  const n = Number(m[1]);
  return n * { s: 1, m: 60, h: 3600, d: 86400 }[(m[2] ?? 's') as 's' | 'm' | 'h' | 'd'];
}

/**
 * Where the control plane that owns a data folder serves its API: written at every start
 * (`<data-dir>/server.json`), so that commands run beside it — `kubelab token create
 * --data-dir D` — reach the server that owns D whatever `--listen` said, instead of guessing
 * 127.0.0.1:6443. The desktop app writes it too.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../client/util/atomicfile.js';

export interface ServerRecord {
  /** host:port as listened on ("0.0.0.0:6443", "127.0.0.1:41234"). */
  listen: string;
  tls: boolean;
  pid: number;
  startedAt: string;
}

export function serverRecordPath(dataDir: string): string {
  return join(dataDir, 'server.json');
}

export function writeServerRecord(dataDir: string, record: ServerRecord): void {
  writeFileAtomic(serverRecordPath(dataDir), JSON.stringify(record, null, 2) + '\n', 0o644);
}

/** The record, or undefined when no server has started on this folder (or the file is damaged). */
export function readServerRecord(dataDir: string): ServerRecord | undefined {
  const path = serverRecordPath(dataDir);
  if (!existsSync(path)) return undefined;
  try {
    const record = JSON.parse(readFileSync(path, 'utf8')) as Partial<ServerRecord>;
    return typeof record.listen === 'string' && typeof record.tls === 'boolean'
      ? (record as ServerRecord)
      : undefined;
  } catch {
    return undefined;
  }
}

/** The address a client on this machine dials for a server listening on `listen` (0.0.0.0 → 127.0.0.1). */
export function localDialAddress(listen: string): string {
  const m = /^\[?(.*?)\]?:(\d+)$/.exec(listen);
  if (!m) return listen;
  const [, host, port] = m;
  if (host === '0.0.0.0' || host === '') return `127.0.0.1:${port}`;
  if (host === '::') return `[::1]:${port}`;
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

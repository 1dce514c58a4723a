/**
 * labctl's configuration file (`~/.kubelab/config`, or $KUBELAB_CONFIG): named contexts, each a
 * server, the CA that pins it, a token and a default namespace, and which one is current —
 * kubeconfig's idea, flattened. The file holds tokens, so it is written 0600, atomically.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { parse, stringify } from 'yaml';
import { CliError } from './errors.js';

export interface ContextEntry {
  name: string;
  /** https://host:port */
  server: string;
  /** The cluster CA, PEM, base64-encoded (as kubeconfig's certificate-authority-data). */
  'certificate-authority-data'?: string;
  /** Or a path to the CA file. */
  'certificate-authority'?: string;
  token?: string;
  namespace?: string;
  /** A loopback development server started with --plaintext. */
  plaintext?: boolean;
}

export interface LabConfig {
  apiVersion: 'kubelab/v1';
  kind: 'Config';
  'current-context'?: string;
  contexts: ContextEntry[];
}

/** $KUBELAB_CONFIG, else ~/.kubelab/config under $HOME. */
export function configPath(env: NodeJS.ProcessEnv): string {
  if (env.KUBELAB_CONFIG) return env.KUBELAB_CONFIG;
  return join(env.HOME || homedir(), '.kubelab', 'config');
}

export function emptyConfig(): LabConfig {
  return { apiVersion: 'kubelab/v1', kind: 'Config', contexts: [] };
}

export function loadConfig(path: string): LabConfig {
  if (!existsSync(path)) return emptyConfig();
  let raw: unknown;
  try {
    raw = parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new CliError(
      `${path} is not valid YAML (${(err as Error).message}); fix it or remove it and run \`labctl login\``,
    );
  }
  if (raw === null || raw === undefined) return emptyConfig();
  const cfg = raw as Partial<LabConfig>;
  if (typeof cfg !== 'object' || (cfg.contexts !== undefined && !Array.isArray(cfg.contexts))) {
    throw new CliError(
      `${path} is not a labctl config (contexts must be a list); fix it or remove it and run \`labctl login\``,
    );
  }
  const contexts = (cfg.contexts ?? []).filter((c): c is ContextEntry => typeof c?.name === 'string');
  return { ...emptyConfig(), ...cfg, contexts } as LabConfig;
}

export function saveConfig(path: string, cfg: LabConfig): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, stringify(cfg), { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
}

export function findContext(cfg: LabConfig, name: string): ContextEntry | undefined {
  return cfg.contexts.find((c) => c.name === name);
}

/** Adds the context or replaces the one of the same name. */
export function upsertContext(cfg: LabConfig, entry: ContextEntry): void {
  const i = cfg.contexts.findIndex((c) => c.name === entry.name);
  if (i >= 0) cfg.contexts[i] = entry;
  else cfg.contexts.push(entry);
}

export function encodeCa(pem: string): string {
  return Buffer.from(pem, 'utf8').toString('base64');
}

/** The PEM of a context's CA, from its inline data or its file. */
export function contextCa(entry: ContextEntry): string | undefined {
  if (entry['certificate-authority-data'])
    return Buffer.from(entry['certificate-authority-data'], 'base64').toString('utf8');
  if (entry['certificate-authority']) return readCaFile(entry['certificate-authority']);
  return undefined;
}

export function readCaFile(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new CliError(`cannot read the CA certificate ${path}: ${(err as Error).message}`);
  }
}

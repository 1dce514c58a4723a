/**
 * Who labctl talks to and as whom: the current context of the config file, overridden by
 * environment variables, overridden by flags (kubectl's precedence). Clients are made on first
 * use and closed together, so a command that never calls the server never dials it.
 */
import type { Client } from '../client/client.js';
import { MetricsClient, TokensClient } from '../client/grpc/cluster.js';
import type { ConnectionOptions } from '../client/grpc/connection.js';
import { grpcClient } from '../client/grpc/transport.js';
import { configPath, contextCa, findContext, loadConfig, readCaFile, type LabConfig } from './config.js';
import { CliError } from './errors.js';
import type { Io } from './io.js';
import { normalizeServer } from './server.js';

/** The flags every command accepts (see main.ts). */
export interface GlobalFlags {
  context?: string;
  server?: string;
  token?: string;
  certificateAuthority?: string;
  namespace?: string;
  requestTimeout?: number;
}

/** Where the server address came from, so a failure can say where to fix it. */
export interface ServerOrigin {
  source: '--server' | 'KUBELAB_SERVER' | 'context';
  contextName?: string;
  /** The context's own server, when another one was given. */
  contextServer?: string;
}

/** No CA pins this server: labctl will not send a token to it (diagnose.ts says why first). */
export class MissingCaError extends CliError {
  constructor(
    readonly server: string,
    readonly origin: ServerOrigin,
  ) {
    super(
      `no CA certificate for ${server}: pass --certificate-authority <ca.crt> (the control plane's <data-dir>/pki/ca.crt), or run \`labctl login ${server}\``,
    );
    this.name = 'MissingCaError';
  }
}

export interface Target {
  /** https://host:port */
  server: string;
  origin: ServerOrigin;
  token: string;
  caPem?: string;
  plaintext: boolean;
  namespace: string;
  timeoutMs: number;
}

export const DEFAULT_NAMESPACE = 'default';
const DEFAULT_TIMEOUT_MS = 30_000;

/** Flags, then KUBELAB_* variables, then the context. */
export function resolveTarget(flags: GlobalFlags, env: NodeJS.ProcessEnv, cfg: LabConfig): Target {
  const contextName = flags.context ?? env.KUBELAB_CONTEXT ?? cfg['current-context'];
  const ctx = contextName ? findContext(cfg, contextName) : undefined;
  if (contextName && !ctx && (flags.context || env.KUBELAB_CONTEXT)) {
    throw new CliError(
      `context "${contextName}" does not exist; see \`labctl config get-contexts\`, or create it with \`labctl login\``,
    );
  }
  const given = flags.server ?? env.KUBELAB_SERVER ?? ctx?.server;
  if (!given) {
    throw new CliError(
      'no server is configured: run `labctl login https://<control plane>:6443 --token <token>`, or pass --server and --token',
    );
  }
  const server = normalizeServer(given);
  const contextServer = ctx?.server ? normalizeServer(ctx.server) : undefined;
  const caFile = flags.certificateAuthority ?? env.KUBELAB_CERTIFICATE_AUTHORITY;
  // A server given on its own (flag or env) is not the context's server: its CA must come too.
  // The same server spelt differently (no scheme, no default port) is still the context's.
  const serverOverridden = server !== contextServer;
  const caPem = caFile ? readCaFile(caFile) : !serverOverridden && ctx ? contextCa(ctx) : undefined;
  const plaintext = !serverOverridden && ctx?.plaintext === true;
  const origin: ServerOrigin = {
    source: flags.server ? '--server' : env.KUBELAB_SERVER ? 'KUBELAB_SERVER' : 'context',
    ...(ctx ? { contextName: ctx.name } : {}),
    ...(serverOverridden && contextServer ? { contextServer } : {}),
  };
  if (!caPem && !plaintext) throw new MissingCaError(server, origin);
  const token = flags.token ?? env.KUBELAB_TOKEN ?? ctx?.token ?? '';
  if (!token) {
    throw new CliError(
      `no token for ${server}: run \`labctl login ${server} --token <token>\`, or pass --token`,
    );
  }
  return {
    server,
    origin,
    token,
    caPem,
    plaintext,
    namespace: flags.namespace ?? env.KUBELAB_NAMESPACE ?? ctx?.namespace ?? DEFAULT_NAMESPACE,
    timeoutMs: flags.requestTimeout ?? DEFAULT_TIMEOUT_MS,
  };
}

/** The namespace a command acts in, without needing a server (for printing and defaults). */
export function namespaceOf(flags: GlobalFlags, env: NodeJS.ProcessEnv, cfg: LabConfig): string {
  const contextName = flags.context ?? env.KUBELAB_CONTEXT ?? cfg['current-context'];
  const ctx = contextName ? findContext(cfg, contextName) : undefined;
  return flags.namespace ?? env.KUBELAB_NAMESPACE ?? ctx?.namespace ?? DEFAULT_NAMESPACE;
}

export class Session {
  private target: Target | undefined;
  private apiClient: Client | undefined;
  private readonly closers: Array<() => void> = [];

  constructor(
    readonly io: Io,
    private readonly flags: GlobalFlags,
  ) {}

  get configPath(): string {
    return configPath(this.io.env);
  }

  loadConfig(): LabConfig {
    return loadConfig(this.configPath);
  }

  /** Resolves the server, CA and token (throws what to do when something is missing). */
  resolve(): Target {
    this.target ??= resolveTarget(this.flags, this.io.env, this.loadConfig());
    return this.target;
  }

  /** --request-timeout, if given. */
  get requestTimeoutMs(): number | undefined {
    return this.flags.requestTimeout;
  }

  /** The target, if a call has resolved it (for explaining a failure). */
  get resolved(): Target | undefined {
    return this.target;
  }

  /** The namespace to act in: -n, $KUBELAB_NAMESPACE, the context's, or "default". */
  get namespace(): string {
    return namespaceOf(this.flags, this.io.env, this.loadConfig());
  }

  /** The namespace given with -n or $KUBELAB_NAMESPACE, if any (a manifest's own must then agree). */
  get explicitNamespace(): string | undefined {
    return this.flags.namespace ?? this.io.env.KUBELAB_NAMESPACE;
  }

  connectionOptions(): ConnectionOptions {
    const t = this.resolve();
    return {
      server: t.server,
      token: t.token,
      caPem: t.caPem,
      plaintext: t.plaintext,
      timeoutMs: t.timeoutMs,
    };
  }

  client(): Client {
    if (!this.apiClient) {
      // A person is waiting: a few quick retries, not the long patience of an agent.
      const client = grpcClient({
        ...this.connectionOptions(),
        retry: { attempts: 3, maxDelayMs: 1000 },
        fieldManager: 'labctl',
      });
      this.apiClient = client;
      this.closers.push(() => client.close());
    }
    return this.apiClient;
  }

  tokens(): TokensClient {
    const tokens = new TokensClient(this.connectionOptions());
    this.closers.push(() => tokens.close());
    return tokens;
  }

  metrics(): MetricsClient {
    const metrics = new MetricsClient(this.connectionOptions());
    this.closers.push(() => metrics.close());
    return metrics;
  }

  close(): void {
    for (const close of this.closers.splice(0)) close();
    this.apiClient = undefined;
  }
}

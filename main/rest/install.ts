/**
 * What a lab machine fetches to join, before it has any credential (k3s serves the same at
 * /cacerts): the cluster's CA certificate, the install scripts and the agent executables with
 * their checksums. All public and read-only — none holds a secret: the join token, which does,
 * travels in the install command, and the script checks the CA against the token's hash before
 * it trusts anything else it downloads.
 *
 *   GET /cacerts                          the CA certificate (PEM)
 *   GET /install.sh, /install.ps1         the install scripts (Linux and macOS; Windows)
 *   GET /agent/kubelab-agent-<os>-<arch>[.exe][.sha256], /agent/kubelab-agent.service
 */
import { createReadStream, existsSync, promises as fsp, readFileSync } from 'node:fs';
import path from 'node:path';
import { ApiError, echo } from '../../client/api/errors.js';
import type { RestRequestMessage, RestResponse } from './handler.js';

export interface InstallAssets {
  /** The cluster CA (absent when serving without TLS). */
  caPem?: string;
  /** Where `npm run build:agent` put the executables and scripts. */
  agentDir?: string;
}

/**
 * `dist/agent` of the kubelab package this server runs from (where `npm run build:agent` puts
 * them), when it has one.
 */
export function defaultAgentDir(from = import.meta.dirname): string | undefined {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const manifest = path.join(dir, 'package.json');
    if (existsSync(manifest)) {
      try {
        if ((JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'kubelab') {
          const agents = path.join(dir, 'dist', 'agent');
          return existsSync(agents) ? agents : undefined;
        }
      } catch {
        // Not a package we know: look further up.
      }
    }
    if (path.dirname(dir) === dir) return undefined;
  }
}

const SCRIPTS = new Set(['install.sh', 'install.ps1']);
const AGENT_FILE = /^(kubelab-agent-[a-z]+-[a-z0-9]+(\.exe)?(\.sha256)?|kubelab-agent\.service)$/;

/** Whether the path is one of these (answered before any authentication). */
export function isInstallPath(pathname: string): boolean {
  return pathname === '/cacerts' || SCRIPTS.has(pathname.slice(1)) || pathname.startsWith('/agent/');
}

export async function serveInstallAsset(
  req: RestRequestMessage,
  res: RestResponse,
  pathname: string,
  assets: InstallAssets,
): Promise<void> {
  if (req.method !== 'GET' && req.method !== 'HEAD')
    throw new ApiError('NotImplemented', `${echo(pathname, 100)} can only be read (GET)`);
  if (pathname === '/cacerts') {
    if (!assets.caPem)
      throw new ApiError('NotFound', 'this control plane serves without TLS, so it has no CA certificate');
    return sendBytes(req, res, Buffer.from(assets.caPem), 'application/x-pem-file');
  }
  const name = SCRIPTS.has(pathname.slice(1)) ? pathname.slice(1) : pathname.slice('/agent/'.length);
  if (!SCRIPTS.has(name) && !AGENT_FILE.test(name))
    throw new ApiError(
      'NotFound',
      `nothing to download at ${echo(pathname, 100)}: /install.sh, /install.ps1, /cacerts and /agent/kubelab-agent-<os>-<arch> are served`,
    );
  const file = assets.agentDir ? path.join(assets.agentDir, name) : undefined;
  const stat = file ? await fsp.stat(file).catch(() => undefined) : undefined;
  if (!file || !stat?.isFile())
    throw new ApiError(
      'NotFound',
      `this control plane has no ${name}: build the agents with \`npm run build:agent\` and start the server with --agent-dir dist/agent (now ${assets.agentDir ?? 'none'})`,
    );
  const type =
    name.endsWith('.sh') || name.endsWith('.ps1') || name.endsWith('.sha256') || name.endsWith('.service')
      ? 'text/plain; charset=utf-8'
      : 'application/octet-stream';
  res.writeHead(200, {
    'content-type': type,
    'content-length': stat.size,
    'cache-control': 'no-cache',
    ...(type === 'application/octet-stream'
      ? { 'content-disposition': `attachment; filename="${name}"` }
      : {}),
  });
  if (req.method === 'HEAD') return void res.end();
  await new Promise<void>((resolve, reject) => {
    const stream = createReadStream(file);
    stream.on('error', reject);
    stream.on('end', resolve);
    stream.pipe(res as NodeJS.WritableStream);
  });
}

function sendBytes(req: RestRequestMessage, res: RestResponse, body: Buffer, type: string): void {
  res.writeHead(200, { 'content-type': type, 'content-length': body.length, 'cache-control': 'no-cache' });
  if (req.method === 'HEAD') res.end();
  else res.end(body);
}

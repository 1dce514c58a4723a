/**
 * `kubelab-agent upgrade`: the agent replaces its own executable with the one its control
 * plane serves (/agent/kubelab-agent-<os>-<arch>, built by `npm run build:agent` there), over
 * TLS pinned to the cluster CA it joined with, checked against the served checksum; the swap is
 * one rename (the running agent keeps its old file open), and a service manager is asked to
 * restart it. Its pods keep running: the restarted agent adopts them.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import https from 'node:https';
import path from 'node:path';

/** What the control plane calls this machine's executable (scripts/build-agent.mjs names). */
export function agentFileName(
  platform: NodeJS.Platform = process.platform,
  arch: string = process.arch,
): string {
  const os = platform === 'win32' ? 'windows' : platform;
  return `kubelab-agent-${os}-${arch}${platform === 'win32' ? '.exe' : ''}`;
}

/** Whether this process is the single executable (not `node bin/kubelab-agent.mjs`). */
export function runsAsExecutable(): boolean {
  try {
    // node:sea exists from Node 20.12; isSea() tells a single-executable application.
    const sea = (
      process as unknown as { getBuiltinModule?: (id: string) => { isSea(): boolean } }
    ).getBuiltinModule?.('node:sea');
    if (sea) return sea.isSea();
  } catch {
    // Older Node: fall through.
  }
  return path.basename(process.execPath).startsWith('kubelab-agent');
}

/** GETs a file from the control plane, trusting only the cluster CA; at most `maxBytes`. */
export function download(url: string, caPem: string, maxBytes = 512 * 1024 * 1024): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const req = https.get(url, { ca: caPem, timeout: 60_000 }, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        reject(
          new Error(
            res.statusCode === 404
              ? `the control plane has no ${path.basename(new URL(url).pathname)}: build the agents there with \`npm run build:agent\``
              : `${url} answered ${res.statusCode}`,
          ),
        );
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > maxBytes) {
          req.destroy(new Error(`${url} sent more than ${maxBytes} bytes`));
          return;
        }
        chunks.push(c);
      });
      res.on('end', () => resolve(Buffer.concat(chunks)));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`${url} did not answer within 60 s`)));
    req.on('error', reject);
  });
}

export interface UpgradeResult {
  upgraded: boolean;
  from: string;
  to: string;
}

export interface UpgradeOptions {
  /** The control plane, e.g. https://10.0.0.2:6443. */
  server: string;
  caPem: string;
  /** The executable to replace (this process's own). */
  executable: string;
  /** This agent's version. */
  current: string;
  /** Replace it even when the served one has the same version. */
  force?: boolean;
  log?: (message: string) => void;
}

/** Downloads, checks and swaps in the control plane's agent; says what it did. */
export async function upgradeExecutable(options: UpgradeOptions): Promise<UpgradeResult> {
  const file = agentFileName();
  const base = `${options.server.replace(/\/+$/, '')}/agent/${file}`;
  options.log?.(`downloading ${file} from ${options.server}`);
  const [bytes, sum] = await Promise.all([
    download(base, options.caPem),
    download(`${base}.sha256`, options.caPem, 4096),
  ]);
  const want = sum.toString('utf8').slice(0, 64);
  const got = createHash('sha256').update(bytes).digest('hex');
  if (got !== want)
    throw new Error(
      `the downloaded ${file} is not the one the control plane built (sha256 ${got}, expected ${want}): not installed`,
    );
  const next = `${options.executable}.new`;
  await fsp.writeFile(next, bytes, { mode: 0o755 });
  try {
    const to = execFileSync(next, ['--version'], { encoding: 'utf8', timeout: 30_000 }).trim();
    if (to === options.current && !options.force) {
      await fsp.rm(next, { force: true });
      return { upgraded: false, from: options.current, to };
    }
    // One rename: whoever starts the agent next gets the whole new file, never part of it.
    await fsp.rename(next, options.executable);
    return { upgraded: true, from: options.current, to };
  } catch (err) {
    await fsp.rm(next, { force: true });
    throw err;
  }
}

/** How install.sh's service is restarted, per service manager. */
export const RESTART_SERVICE = {
  systemd: ['systemctl', 'restart', 'kubelab-agent'],
  launchd: ['launchctl', 'kickstart', '-k', 'system/io.kubelab.agent'],
} as const;

/** The service manager this process runs under, if any, and how to restart it. */
export function serviceManager(
  env: NodeJS.ProcessEnv = process.env,
): { name: string; restart: string[] } | undefined {
  // systemd sets INVOCATION_ID for a service's processes; launchd sets XPC_SERVICE_NAME.
  if (env.INVOCATION_ID) return { name: 'systemd', restart: [...RESTART_SERVICE.systemd] };
  if (env.XPC_SERVICE_NAME?.startsWith('io.kubelab'))
    return { name: 'launchd', restart: [...RESTART_SERVICE.launchd] };
  return undefined;
}

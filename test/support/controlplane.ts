/** A real control plane on loopback (TLS, tokens, SQLite in a temp folder) for tests. */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Role } from '../../client/api/local.js';
import type { Client } from '../../client/client.js';
import { joinCluster, TokensClient } from '../../client/grpc/cluster.js';
import { grpcClient, type GrpcClientOptions } from '../../client/grpc/transport.js';
import { ControlPlane, type ControlPlaneOptions } from '../../main/controlplane.js';
import { silentLogger } from '../../main/logging.js';

export interface TestControlPlane {
  cp: ControlPlane;
  dataDir: string;
  caPem: string;
  /** A gRPC client with the admin token, or a token of another role. */
  client(options?: Partial<GrpcClientOptions> & { role?: Role }): Client;
  tokenFor(role: Role, name?: string): string;
  close(): Promise<void>;
}

export async function startTestControlPlane(
  options: Partial<ControlPlaneOptions> = {},
): Promise<TestControlPlane> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'kubelab-cp-'));
  const cp = await ControlPlane.start({ dataDir, listen: '127.0.0.1:0', logger: silentLogger(), ...options });
  const caPem = cp.pki ? readFileSync(cp.pki.caPath, 'utf8') : '';
  const clients: Client[] = [];
  const tokenFor = (role: Role, name = `${role}-user`) => cp.tokens.create({ name, role }).token;
  return {
    cp,
    dataDir,
    caPem,
    tokenFor,
    client(opts = {}) {
      const token = opts.token ?? (opts.role && opts.role !== 'admin' ? tokenFor(opts.role) : cp.adminToken);
      const c = grpcClient({
        server: `127.0.0.1:${cp.port}`,
        caPem,
        plaintext: options.plaintext,
        ...opts,
        token,
      });
      clients.push(c);
      return c;
    },
    async close() {
      for (const c of clients) c.close();
      await cp.stop();
      if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Joins `nodeName` to the control plane as an agent does (a join token, then the node's own
 * credential) and gives its client and a data folder; `cleanups` gets what undoes them.
 */
export async function joinedNode(
  t: TestControlPlane,
  nodeName: string,
  cleanups: Array<() => Promise<void> | void>,
): Promise<{ client: Client; dataDir: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'kubelab-agentdata-'));
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  const server = `127.0.0.1:${t.cp.port}`;
  const tokens = new TokensClient({ server, token: t.cp.adminToken, caPem: t.caPem });
  cleanups.push(() => tokens.close());
  const joined = await joinCluster(server, (await tokens.create()).token!, nodeName);
  const client = grpcClient({ server, token: joined.token, caPem: joined.caPem });
  cleanups.push(() => client.close());
  return { client, dataDir };
}

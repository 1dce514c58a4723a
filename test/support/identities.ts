/**
 * A real `kubelab server` process with one credential of each kind a client can hold — the
 * least privileged first: a join token, a viewer token, a node credential (joined as
 * `nodeName`) and the admin token — and a raw gRPC channel to send it whatever bytes a test
 * likes.
 */
import type * as grpc from '@grpc/grpc-js';
import type { Client } from '../../client/client.js';
import { joinCluster, TokensClient } from '../../client/grpc/cluster.js';
import { grpcClient } from '../../client/grpc/transport.js';
import { startServerProcess, type ServerProcess } from './serverproc.js';

export type Who = 'join' | 'viewer' | 'node' | 'admin';
export const WHO: readonly Who[] = ['join', 'viewer', 'node', 'admin'];

export interface ServerWithIdentities {
  server: ServerProcess;
  /** A typed client with the admin token. */
  admin: Client;
  channel: grpc.Client;
  /** Each identity's bearer token. */
  tokens: Record<Who, string>;
  stop(): Promise<void>;
}

export async function startServerWithIdentities(nodeName = 'lab-1'): Promise<ServerWithIdentities> {
  const server = await startServerProcess();
  const connection = { server: `127.0.0.1:${server.port}`, caPem: server.caPem, token: server.adminToken };
  const admin = grpcClient(connection);
  const tokensClient = new TokensClient(connection);
  const join = (await tokensClient.create({ role: 'join' })).token!;
  const tokens: Record<Who, string> = {
    join: join.split('::')[1],
    viewer: (await tokensClient.create({ role: 'viewer', name: 'housemate' })).token!,
    node: (await joinCluster(`https://127.0.0.1:${server.port}`, join, nodeName)).token,
    admin: server.adminToken,
  };
  tokensClient.close();
  return {
    server,
    admin,
    channel: server.channel(),
    tokens,
    async stop() {
      admin.close();
      await server.stop();
    },
  };
}

/**
 * A watch client that stops reading: it opens a Pod watch over gRPC, says "established" on
 * stdout, and stops its own process (SIGSTOP), so its socket is not read until SIGCONT. Then it
 * reads on and prints what it saw as one JSON line: { events, error }.
 * Usage: tsx stalledwatcher.ts <host:port> <token> <ca file> <resourceVersion>
 */
import type * as grpc from '@grpc/grpc-js';
import { readFileSync } from 'node:fs';
import { Connection } from '../../client/grpc/connection.js';
import { ResourcesService } from '../../proto/gen/kubelab/v1/api.js';

const [server, token, caFile, resourceVersion] = process.argv.slice(2);
const conn = new Connection(
  {
    server,
    token,
    caPem: readFileSync(caFile, 'utf8'),
    // HTTP/2's default window: little is in flight when the process stops.
    channelOptions: { 'grpc-node.flow_control_window': 65_535 },
  },
  ResourcesService as unknown as grpc.ServiceDefinition,
  'kubelab.v1.Resources',
);
const call = (
  conn.client as unknown as { watch(r: unknown, md: grpc.Metadata): grpc.ClientReadableStream<unknown> }
).watch({ kind: 'Pod', namespace: 'default', resourceVersion }, conn.metadata());
let events = 0;
call.on('data', () => events++);
call.once('metadata', () => {
  process.stdout.write('established\n', () => process.kill(process.pid, 'SIGSTOP'));
});
call.once('error', (err: grpc.ServiceError) => {
  process.stdout.write(`${JSON.stringify({ events, error: err.details })}\n`, () => process.exit(0));
});

// A client in its own process that gets one object again and again and prints each call's
// code and latency (ms) on a line: how responsive a server is, measured where the test's own
// work cannot delay it. Arguments: port, CA file, bearer token, the GetRequest's bytes (hex).
import * as grpc from '@grpc/grpc-js';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

const [port, caPath, token, requestHex] = process.argv.slice(2);
const client = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createSsl(readFileSync(caPath)), {
  'grpc.ssl_target_name_override': 'localhost',
});
const request = Buffer.from(requestHex, 'hex');
const metadata = new grpc.Metadata();
metadata.set('authorization', `Bearer ${token}`);

function once() {
  const started = performance.now();
  client.makeUnaryRequest(
    '/kubelab.v1.Resources/Get',
    (b) => b,
    (b) => b,
    request,
    metadata,
    (err) => {
      process.stdout.write(`${err?.code ?? 0} ${(performance.now() - started).toFixed(2)}\n`);
      setTimeout(once, 10);
    },
  );
}
once();

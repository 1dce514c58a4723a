/**
 * The /metrics endpoint for Prometheus (and /healthz), plain HTTP on a loopback address by
 * default: metrics carry no secrets, but nothing else is served there.
 */
import { createServer, type Server } from 'node:http';
import type { Registry } from 'prom-client';
import { splitHostPort } from './grpc/server.js';

/**
 * Where `kubelab server` serves /metrics unless told otherwise: a port of kubelab's own beside
 * the API's 6443 (Kubernetes' controller-manager's 10257 would collide with a k3s or
 * Kubernetes node on the same machine).
 */
export const DEFAULT_METRICS_LISTEN = '127.0.0.1:6445';

export interface MetricsServer {
  port: number;
  close(): Promise<void>;
}

export async function startMetricsServer(registry: Registry, listen: string): Promise<MetricsServer> {
  const { host, port } = splitHostPort(listen);
  const server: Server = createServer((req, res) => {
    if (req.url === '/metrics') {
      registry.metrics().then(
        (text) => {
          res.writeHead(200, { 'content-type': registry.contentType });
          res.end(text);
        },
        (err: Error) => {
          res.writeHead(500, { 'content-type': 'text/plain' });
          res.end(`collecting metrics failed: ${err.message}\n`);
        },
      );
      return;
    }
    if (req.url === '/healthz') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('ok\n');
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' });
    res.end('not found: try /metrics or /healthz\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err) => reject(new Error(`cannot serve metrics on ${listen}: ${err.message}`)));
    server.listen(port, host, resolve);
  });
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : port,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/**
 * How labctl writes a server address: `https://host:port`, whatever the user typed
 * (`lab.local`, `127.0.0.1:17443`, `https://[::1]:6443/`). One spelling per server, so a
 * `--server` without a scheme is recognised as the context's own server (and its CA is used).
 */
import { CliError } from './errors.js';

export const DEFAULT_PORT = '6443';

/** https://host:port, the scheme and the default port filled in (kubelab's gRPC is TLS). */
export function normalizeServer(server: string): string {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(server) ? server : `https://${server}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw new CliError(
      `"${server}" is not a server address: give https://host:port, e.g. https://lab.local:6443`,
    );
  }
  if (!url.hostname) {
    throw new CliError(`"${server}" names no host: give https://host:port, e.g. https://lab.local:6443`);
  }
  return `https://${url.hostname}:${url.port || DEFAULT_PORT}`;
}

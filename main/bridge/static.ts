/**
 * The built GUI (electron-vite's out/renderer) as static files: known content types, no
 * directory listings, nothing outside the folder (`..`, encoded or not, and symlinks out are
 * refused), and index.html for paths that name no file (the GUI's own routes).
 */
import { createReadStream } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, join, resolve, sep } from 'node:path';

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.ttf': 'font/ttf',
  '.wasm': 'application/wasm',
};

export function contentType(path: string): string {
  return CONTENT_TYPES[extname(path).toLowerCase()] ?? 'application/octet-stream';
}

function plain(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' });
  res.end(text + '\n');
}

/**
 * Where a URL path points inside `root`, or undefined when it would leave it. `pathname` is
 * the raw (still percent-encoded) path of the request.
 */
export function resolveInside(root: string, pathname: string): string | undefined {
  let decoded: string;
  try {
    decoded = decodeURIComponent(pathname);
  } catch {
    return undefined;
  }
  if (decoded.includes('\0') || decoded.includes('\\')) return undefined;
  if (decoded.split('/').some((segment) => segment === '..')) return undefined;
  const path = resolve(root, '.' + (decoded.startsWith('/') ? decoded : '/' + decoded));
  return path === root || path.startsWith(root + sep) ? path : undefined;
}

async function fileInside(root: string, path: string): Promise<{ path: string; size: number } | undefined> {
  try {
    const real = await realpath(path);
    if (real !== root && !real.startsWith(root + sep)) return undefined;
    const info = await stat(real);
    return info.isFile() ? { path: real, size: info.size } : undefined;
  } catch {
    return undefined;
  }
}

/** Serves a GET or HEAD for `pathname` from `rootDir`. */
export async function serveStatic(
  rootDir: string,
  pathname: string,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('allow', 'GET, HEAD');
    plain(res, 405, `${req.method} is not allowed here: the GUI is read with GET`);
    return;
  }
  let root: string;
  try {
    root = await realpath(rootDir);
  } catch {
    plain(res, 503, `the GUI is not built (no ${rootDir}): run \`npm run build\`, then reload this page`);
    return;
  }
  const path = resolveInside(root, pathname);
  if (!path) {
    plain(res, 403, `forbidden: ${pathname} is outside the GUI's files`);
    return;
  }
  let file = await fileInside(root, path === root ? join(root, 'index.html') : path);
  // A path naming no file and having no extension is one of the GUI's own routes.
  if (!file && !extname(path)) file = await fileInside(root, join(root, 'index.html'));
  if (!file) {
    plain(res, 404, `not found: ${pathname}`);
    return;
  }
  // vite's assets/ names carry a hash of their content: they never change. Anything else
  // (index.html above all) is checked again on each load.
  const hashed = file.path.startsWith(join(root, 'assets') + sep);
  res.writeHead(200, {
    'content-type': contentType(file.path),
    'content-length': String(file.size),
    'cache-control': hashed ? 'private, max-age=31536000, immutable' : 'no-cache',
  });
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  const stream = createReadStream(file.path);
  stream.on('error', () => res.destroy());
  stream.pipe(res);
}

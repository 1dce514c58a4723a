/** A whole REST answer: its status, body and the headers every answer of this door carries. */
import type { RestResponse } from './handler.js';

/** Kubernetes' answers are never cached by a client or a proxy in between. */
export const NO_CACHE = 'no-cache, private';

export function send(
  res: RestResponse,
  code: number,
  body: string | Buffer,
  contentType = 'application/json',
): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  res.writeHead(code, { 'content-type': contentType, 'cache-control': NO_CACHE });
  res.end(body);
}

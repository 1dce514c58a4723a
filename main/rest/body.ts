/**
 * A request body, read only after the caller is authenticated, and never more of it than a
 * write may carry: the declared length is checked first, and the bytes are counted as they
 * arrive, so an endless body is cut off at the limit rather than buffered.
 */
import type { Readable } from 'node:stream';
import { ApiError } from '../../client/api/errors.js';
import { MAX_REQUEST_BYTES } from '../../client/parse/limits.js';

function tooLarge(size: string): ApiError {
  return new ApiError(
    'RequestEntityTooLarge',
    `the request body is ${size}, over the limit of ${MAX_REQUEST_BYTES} bytes; objects may be at most 1.5 MiB — store large data outside the cluster`,
  );
}

type BodyStream = Readable & { headers: Record<string, string | string[] | undefined> };

/** The body's bytes (a protobuf body); readBody for text. */
export async function readBytes(req: BodyStream, limit = MAX_REQUEST_BYTES): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    drain(req, limit);
    throw tooLarge(`${declared} bytes`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) {
      drain(req, limit);
      throw tooLarge(`over ${limit} bytes`);
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** The body as text: JSON or YAML, which must be UTF-8. */
export async function readBody(req: BodyStream, limit = MAX_REQUEST_BYTES): Promise<string> {
  const body = await readBytes(req, limit);
  const text = body.toString('utf8');
  if (text.includes('\uFFFD') && !Buffer.from(text, 'utf8').equals(body))
    throw new ApiError('BadRequest', 'the request body is not valid UTF-8; send JSON or YAML text');
  return text;
}

/**
 * Reads what the client still sends, keeping none of it, so that it reads the 413 instead of a
 * reset connection; a client that keeps sending past a few more limits' worth is cut off.
 */
function drain(req: Readable, limit: number): void {
  let discarded = 0;
  req.on('data', (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > 16 * limit) req.destroy();
  });
  req.resume();
}

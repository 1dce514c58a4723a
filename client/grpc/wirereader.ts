/**
 * The protobuf reader every kubelab process decodes messages with: the library's reader, with
 * strings read the cheap way. Kubernetes objects repeat the same short strings over and over
 * (namespaces, enum values such as "IfNotPresent" or "NoExecute", label and taint keys), so a
 * short ASCII string is looked up in a small table of recently read ones before a new one is
 * made: 10,000 listed Pods share one "default" instead of holding 10,000 copies, which cuts
 * both the decoding time and what the garbage collector has to copy. Longer strings are sliced
 * straight from the Buffer that grpc-js hands over.
 */
import { BinaryReader } from '@bufbuild/protobuf/wire';

/** Strings up to this many bytes are shared through the table. */
const SHARED_MAX_BYTES = 48;
/** Table slots (a power of two). Bounded memory: at most this many short strings are kept. */
const SLOTS = 4096;
const recent: string[] = new Array<string>(SLOTS).fill('');
const utf8 = new TextDecoder();

function sliceUtf8(buf: Uint8Array, start: number, end: number): string {
  return Buffer.isBuffer(buf) ? buf.toString('utf8', start, end) : utf8.decode(buf.subarray(start, end));
}

function sliceAscii(buf: Uint8Array, start: number, end: number): string {
  return Buffer.isBuffer(buf) ? buf.toString('latin1', start, end) : utf8.decode(buf.subarray(start, end));
}

export class WireReader extends BinaryReader {
  /**
   * ts-proto's generated decoders keep their recursion depth on the reader; declaring it here
   * gives every reader the same shape from the start.
   */
  __tsProtoDecodeDepth = 0;
  /** The library keeps its buffer private; string() needs it too. */
  private readonly source: Uint8Array;

  constructor(buf: Uint8Array) {
    super(buf);
    this.source = buf;
  }

  override string(): string {
    const len = this.uint32();
    const start = this.pos;
    const end = start + len;
    if (end > this.len) throw new RangeError('premature EOF');
    this.pos = end;
    if (len === 0) return '';
    const buf = this.source;
    if (len > SHARED_MAX_BYTES) return sliceUtf8(buf, start, end);
    let hash = len;
    for (let i = start; i < end; i++) {
      const b = buf[i];
      if (b > 0x7f) return sliceUtf8(buf, start, end);
      hash = (Math.imul(hash, 31) + b) | 0;
    }
    const slot = (hash ^ (hash >>> 13)) & (SLOTS - 1);
    const seen = recent[slot];
    if (seen.length === len && sameAscii(seen, buf, start)) return seen;
    const s = sliceAscii(buf, start, end);
    recent[slot] = s;
    return s;
  }
}

function sameAscii(s: string, buf: Uint8Array, start: number): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) !== buf[start + i]) return false;
  return true;
}

type Decode = (bytes: Buffer) => unknown;
interface MethodDefinition {
  requestDeserialize: Decode;
  responseDeserialize: Decode;
}

/**
 * The generated decoders accept a reader in place of bytes (`decode(input: BinaryReader |
 * Uint8Array)`), so wrapping a definition's deserializers makes every message of the service
 * decode through a WireReader.
 */
export function decodeWithWireReader<T extends object>(definition: T, which: 'request' | 'response'): T {
  const out: Record<string, unknown> = {};
  for (const [name, def] of Object.entries(definition)) {
    const d = def as MethodDefinition;
    const key = which === 'request' ? 'requestDeserialize' : 'responseDeserialize';
    const decode = d[key];
    out[name] = { ...d, [key]: (bytes: Buffer) => decode(new WireReader(bytes) as unknown as Buffer) };
  }
  return out as T;
}

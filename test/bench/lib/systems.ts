/**
 * The systems under test, behind the workloads' small interfaces: kubelab through a typed
 * client (gRPC or in-process) and raw etcd through the etcd3 client.
 */
import * as grpc from '@grpc/grpc-js';
import type { Etcd3, Watcher } from 'etcd3';
import type { Client, Watch } from '../../../client/client.js';
import type { Pod } from '../../../client/api/types.js';
import { ListRequest, ResourcesService } from '../../../proto/gen/kubelab/v1/api.js';
import type { RunningWatchers, WatchHarness } from './workloads.js';

export const SEQ_ANNOTATION = 'bench/seq';
export const SENT_ANNOTATION = 'bench/sent';

let pad = 'x'.repeat(700);

/** Sets the padding annotation's size; the benchmark sizes it so a stored Pod is ~1 KiB of JSON. */
export function setPadBytes(n: number): void {
  pad = 'x'.repeat(Math.max(0, n));
}

export function padBytes(): number {
  return pad.length;
}

export function benchPod(name: string, namespace: string, annotations: Record<string, string> = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, annotations: { pad, ...annotations } },
    spec: { containers: [{ name: 'c', command: ['sleep', '1'] }] },
  };
}

export async function ensureNamespace(client: Client, name: string): Promise<void> {
  try {
    await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  } catch (err) {
    if ((err as { reason?: string }).reason !== 'AlreadyExists') throw err;
  }
}

function consume(w: Watch<Pod>, onEvent: (seq: number, sentMs: number) => void, errors: unknown[]) {
  return (async () => {
    try {
      for await (const ev of w) {
        // Each object is created once: its ADDED event is its delivery (a controller's later
        // update of it would arrive as MODIFIED, carrying the same send time).
        if (ev.type !== 'ADDED') continue;
        const a = ev.object.metadata?.annotations;
        onEvent(Number(a?.[SEQ_ANNOTATION]), Number(a?.[SENT_ANNOTATION]));
      }
    } catch (err) {
      errors.push(err);
    }
  })();
}

/** Watchers spread over `watchClients`; the writer creates Pods through `writer`. */
export function kubelabWatchHarness(
  writer: Client,
  watchClients: Client[],
  namespace: string,
  namePrefix: string,
): WatchHarness {
  return {
    async startWatchers(count, onEvent): Promise<RunningWatchers> {
      const { resourceVersion } = await writer.list('Pod', { namespace, limit: 1 });
      const errors: unknown[] = [];
      const watches: Array<Watch<Pod>> = [];
      const loops: Array<Promise<void>> = [];
      for (let i = 0; i < count; i++) {
        const w = await watchClients[i % watchClients.length].watch('Pod', { namespace, resourceVersion });
        watches.push(w);
        loops.push(consume(w, onEvent, errors));
      }
      return {
        async stop() {
          for (const w of watches) w.stop();
          await Promise.all(loops);
          if (errors.length) throw errors[0];
        },
      };
    },
    write(seq, sentMs) {
      return writer.create(
        benchPod(`${namePrefix}-${seq}`, namespace, {
          [SEQ_ANNOTATION]: String(seq),
          [SENT_ANNOTATION]: String(sentMs),
        }),
      );
    },
  };
}

/** A stored Pod's JSON with the name, seq and send time substituted, for raw etcd values. */
export function rawValueFactory(sample: Pod): (name: string, extra?: Record<string, string>) => string {
  const meta = sample.metadata ?? {};
  return (name, extra) =>
    JSON.stringify({
      ...sample,
      metadata: { ...meta, name, annotations: { ...meta.annotations, ...extra } },
    });
}

/** 100 etcd3 watchers on a prefix, spread over a few etcd3 clients (one watch stream each). */
export function etcdWatchHarness(
  writer: Etcd3,
  watchClients: Etcd3[],
  prefix: string,
  value: (name: string, extra?: Record<string, string>) => string,
  parse: boolean,
): WatchHarness {
  return {
    async startWatchers(count, onEvent): Promise<RunningWatchers> {
      const watchers: Watcher[] = [];
      const errors: unknown[] = [];
      for (let i = 0; i < count; i++) {
        const w = await watchClients[i % watchClients.length].watch().prefix(prefix).create();
        w.on('put', (kv) => {
          if (parse) {
            const a = (JSON.parse(kv.value.toString()) as Pod).metadata?.annotations;
            onEvent(Number(a?.[SEQ_ANNOTATION]), Number(a?.[SENT_ANNOTATION]));
          } else {
            onEvent(Number(jsonString(kv.value, SEQ_JSON)), Number(jsonString(kv.value, SENT_JSON)));
          }
        });
        w.on('error', (err) => errors.push(err));
        watchers.push(w);
      }
      return {
        async stop() {
          await Promise.all(watchers.map((w) => w.cancel()));
          if (errors.length) throw errors[0];
        },
      };
    },
    write(seq, sentMs) {
      const name = `w-${seq}`;
      return writer
        .put(prefix + name)
        .value(value(name, { [SEQ_ANNOTATION]: String(seq), [SENT_ANNOTATION]: String(sentMs) }))
        .exec();
    },
  };
}

/**
 * List through gRPC without decoding the answer: the server's time plus the transfer, for
 * telling server-side cost from the typed client's decoding.
 */
export class RawListCaller {
  private readonly client: grpc.Client;

  constructor(server: string, token: string, caPem: string) {
    this.client = channel(server, token, caPem);
  }

  list(req: ListRequest): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      this.client.makeUnaryRequest(
        ResourcesService.list.path,
        ResourcesService.list.requestSerialize,
        (b: Buffer) => b,
        req,
        new grpc.Metadata(),
        { deadline: Date.now() + 60_000 },
        (err, value) => (err ? reject(err) : resolve(value!)),
      );
    });
  }

  close(): void {
    this.client.close();
  }
}

export const SEQ_JSON = Buffer.from(`"${SEQ_ANNOTATION}":"`);
export const SENT_JSON = Buffer.from(`"${SENT_ANNOTATION}":"`);
const SEQ_PROTO = Buffer.from(SEQ_ANNOTATION);
const SENT_PROTO = Buffer.from(SENT_ANNOTATION);

/** A plain string value following `"key":"` in JSON bytes, without parsing the document. */
export function jsonString(buf: Buffer, keyColonQuote: Buffer): string {
  const at = buf.indexOf(keyColonQuote);
  if (at < 0) return '';
  const start = at + keyColonQuote.length;
  return buf.toString('latin1', start, buf.indexOf(0x22, start));
}

const ADDED = Buffer.from('ADDED');

/** WatchEvent { type = 1 } comes first: `0x0a 5 "ADDED"`. */
function isAddedEvent(buf: Buffer): boolean {
  return buf[0] === 0x0a && buf[1] === ADDED.length && buf.subarray(2, 2 + ADDED.length).equals(ADDED);
}

/**
 * An annotation's value in an encoded WatchEvent, without decoding it: a map entry is
 * `0x0a len key 0x12 len value`, and the bench's keys and values are short (one-byte lengths).
 */
function protoAnnotation(buf: Buffer, key: Buffer): string {
  let at = buf.indexOf(key);
  while (at >= 0 && !(buf[at - 1] === key.length && buf[at + key.length] === 0x12))
    at = buf.indexOf(key, at + 1);
  if (at < 0) return '';
  const lenAt = at + key.length + 1;
  return buf.toString('latin1', lenAt + 1, lenAt + 1 + buf[lenAt]);
}

function channel(
  server: string,
  token: string,
  caPem: string,
  options: grpc.ChannelOptions = {},
): grpc.Client {
  const creds = grpc.credentials.combineChannelCredentials(
    grpc.credentials.createSsl(Buffer.from(caPem)),
    grpc.credentials.createFromMetadataGenerator((_p, cb) => {
      const md = new grpc.Metadata();
      md.set('authorization', `Bearer ${token}`);
      cb(null, md);
    }),
  );
  return new grpc.Client(server, creds, {
    'grpc.ssl_target_name_override': 'localhost',
    'grpc.max_receive_message_length': 512 * 1024 * 1024,
    'grpc.use_local_subchannel_pool': 1,
    ...options,
  });
}

/**
 * Watchers on raw gRPC streams that never decode the events (the two annotations are read
 * from the bytes): what the server delivers, without the typed client's decoding.
 */
export function rawGrpcWatchHarness(
  writer: Client,
  target: { server: string; token: string; caPem: string },
  channels: number,
  namespace: string,
  namePrefix: string,
  channelOptions: grpc.ChannelOptions = {},
): WatchHarness {
  const typed = kubelabWatchHarness(writer, [], namespace, namePrefix);
  return {
    async startWatchers(count, onEvent): Promise<RunningWatchers> {
      const { resourceVersion } = await writer.list('Pod', { namespace, limit: 1 });
      const clients = Array.from({ length: channels }, () =>
        channel(target.server, target.token, target.caPem, channelOptions),
      );
      const calls: Array<grpc.ClientReadableStream<Buffer>> = [];
      const ended: Array<Promise<void>> = [];
      const errors: unknown[] = [];
      let stopping = false;
      for (let i = 0; i < count; i++) {
        const call = clients[i % channels].makeServerStreamRequest(
          ResourcesService.watch.path,
          ResourcesService.watch.requestSerialize,
          (b: Buffer) => b,
          { kind: 'Pod', namespace, resourceVersion },
          new grpc.Metadata(),
        );
        await new Promise<void>((resolve, reject) => {
          call.once('metadata', () => resolve());
          call.once('error', reject);
        });
        call.on('data', (b: Buffer) => {
          if (!isAddedEvent(b)) return;
          const seq = protoAnnotation(b, SEQ_PROTO);
          if (seq) onEvent(Number(seq), Number(protoAnnotation(b, SENT_PROTO)));
        });
        ended.push(
          new Promise<void>((resolve) => {
            call.on('error', (err) => {
              if (!stopping) errors.push(err);
              resolve();
            });
            call.on('end', () => resolve());
          }),
        );
        calls.push(call);
      }
      return {
        async stop() {
          stopping = true;
          for (const c of calls) c.cancel();
          await Promise.all(ended);
          for (const c of clients) c.close();
          if (errors.length) throw errors[0];
        },
      };
    },
    write: typed.write,
  };
}

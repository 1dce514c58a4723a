/**
 * The REST door for the benchmarks: node:https over HTTP/1.1 with keep-alive, the cluster CA and
 * the admin bearer token, the way a Kubernetes client library on Node talks to the API port (it
 * offers only http/1.1 by ALPN, which the port routes to REST; see README "One port, two APIs").
 * Besides the calls: a newline-delimited JSON splitter for watch streams and a WatchHarness, so
 * REST watches are measured by the same workload as the gRPC and etcd ones.
 */
import type { IncomingMessage } from 'node:http';
import * as https from 'node:https';
import type { Pod } from '../../../client/api/types.js';
import type { Client } from '../../../client/client.js';
import {
  jsonString,
  kubelabWatchHarness,
  SENT_ANNOTATION,
  SENT_JSON,
  SEQ_ANNOTATION,
  SEQ_JSON,
} from './systems.js';
import type { RunningWatchers, WatchHarness } from './workloads.js';

/** Where a control plane serves its API, as a ChildControlPlane gives it. */
export interface RestTarget {
  server: string;
  token: string;
  caPem: string;
}

export interface RestAnswer {
  status: number;
  body: Buffer;
}

export function podsPath(namespace: string): string {
  return `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods`;
}

/** An answer's body, or an Error naming the status and the server's message. */
function collect(res: IncomingMessage, what: string): Promise<RestAnswer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.once('error', reject);
    res.once('end', () => {
      const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
      const status = res.statusCode ?? 0;
      if (status >= 200 && status < 300) return resolve({ status, body });
      let message = body.toString('utf8', 0, Math.min(body.length, 500));
      try {
        message = (JSON.parse(body.toString()) as { message?: string }).message ?? message;
      } catch {
        // not a Status: the raw text says what happened
      }
      reject(new Error(`${what}: HTTP ${status}: ${message}`));
    });
  });
}

export class RestClient {
  /** Keep-alive connections, reused by sequential calls; one per call in flight. */
  readonly agent: https.Agent;
  private readonly host: string;
  private readonly port: number;
  private readonly authorization: string;

  constructor(target: RestTarget) {
    const at = target.server.lastIndexOf(':');
    this.host = target.server.slice(0, at);
    this.port = Number(target.server.slice(at + 1));
    this.authorization = `Bearer ${target.token}`;
    // ALPN http/1.1 only: offering h2 as well would get an HTTP/2 connection, which node:https
    // cannot speak. The serving certificate names 127.0.0.1, so the address verifies as is.
    this.agent = new https.Agent({
      keepAlive: true,
      ca: target.caPem,
      ALPNProtocols: ['http/1.1'],
    });
  }

  /** Resolves when the answer's headers have arrived; its body is left to the caller. */
  request(method: string, path: string, body?: string): Promise<IncomingMessage> {
    return new Promise((resolve, reject) => {
      const headers: Record<string, string | number> = {
        authorization: this.authorization,
        accept: 'application/json',
      };
      if (body !== undefined) {
        headers['content-type'] = 'application/json';
        headers['content-length'] = Buffer.byteLength(body);
      }
      const req = https.request(
        { agent: this.agent, host: this.host, port: this.port, method, path, headers },
        resolve,
      );
      req.once('error', reject);
      req.end(body);
    });
  }

  async call(method: string, path: string, body?: string): Promise<RestAnswer> {
    return collect(await this.request(method, path, body), `${method} ${path}`);
  }

  /** POST, and the created object parsed, as a client library hands it back. */
  async create<T extends { metadata?: { namespace?: string } }>(obj: T): Promise<T> {
    const ns = obj.metadata?.namespace ?? 'default';
    const { body } = await this.call('POST', podsPath(ns), JSON.stringify(obj));
    return JSON.parse(body.toString()) as T;
  }

  /** A list's answer as received: the bytes' count, nothing decoded (like etcd3's buffers()). */
  listBytes(path: string): Promise<number> {
    return new Promise((resolve, reject) => {
      this.request('GET', path).then((res) => {
        if (res.statusCode !== 200) return void collect(res, `GET ${path}`).then(() => resolve(0), reject);
        let bytes = 0;
        res.on('data', (c: Buffer) => (bytes += c.length));
        res.once('error', reject);
        res.once('end', () => resolve(bytes));
      }, reject);
    });
  }

  /** A list's items, JSON.parse()d as a client would. */
  async listParsed<T>(path: string): Promise<T[]> {
    const { body } = await this.call('GET', path);
    return (JSON.parse(body.toString()) as { items?: T[] }).items ?? [];
  }

  close(): void {
    this.agent.destroy();
  }
}

/**
 * Calls `onLine` with each complete line of a newline-delimited stream, as a subarray of what
 * arrived (copied only when a line spans chunks: TLS records cut events anywhere).
 */
export function lineSplitter(onLine: (line: Buffer) => void): (chunk: Buffer) => void {
  let pending: Buffer[] = [];
  return (chunk) => {
    let start = 0;
    for (let nl = chunk.indexOf(0x0a); nl >= 0; nl = chunk.indexOf(0x0a, start)) {
      if (pending.length) {
        onLine(Buffer.concat([...pending, chunk.subarray(start, nl)]));
        pending = [];
      } else if (nl > start) onLine(chunk.subarray(start, nl));
      start = nl + 1;
    }
    if (start < chunk.length) pending.push(chunk.subarray(start));
  };
}

const ADDED_LINE = Buffer.from('{"type":"ADDED"');
const ERROR_LINE = Buffer.from('{"type":"ERROR"');

export interface RestWatchOptions {
  /** JSON.parse each event (as a client library does), or read the two annotations from the bytes. */
  parse: boolean;
  /** Watches opened at once while starting (each is a TLS connection of its own). */
  connectConcurrency?: number;
}

/**
 * REST watches (GET …/pods?watch=1&resourceVersion=…), each on its own HTTP/1.1 connection
 * (HTTP/1.1 cannot share one between streams); the writer creates Pods through `writer`, as the
 * gRPC harnesses do, so only the delivery differs between the rows.
 */
export function restWatchHarness(
  writer: Client,
  target: RestTarget,
  namespace: string,
  namePrefix: string,
  options: RestWatchOptions,
): WatchHarness {
  const typed = kubelabWatchHarness(writer, [], namespace, namePrefix);
  return {
    async startWatchers(count, onEvent): Promise<RunningWatchers> {
      const { resourceVersion } = await writer.list('Pod', { namespace, limit: 1 });
      const client = new RestClient(target);
      const path = `${podsPath(namespace)}?watch=1&resourceVersion=${encodeURIComponent(resourceVersion ?? '')}`;
      const responses: IncomingMessage[] = [];
      const ended: Array<Promise<void>> = [];
      const errors: unknown[] = [];
      let stopping = false;
      const onLine = (line: Buffer) => {
        if (options.parse) {
          const ev = JSON.parse(line.toString()) as { type: string; object: Pod };
          if (ev.type === 'ERROR') errors.push(new Error(`watch ERROR event: ${line.toString()}`));
          if (ev.type !== 'ADDED') return;
          const a = ev.object.metadata?.annotations;
          onEvent(Number(a?.[SEQ_ANNOTATION]), Number(a?.[SENT_ANNOTATION]));
          return;
        }
        if (line.subarray(0, ERROR_LINE.length).equals(ERROR_LINE))
          errors.push(new Error(`watch ERROR event: ${line.toString()}`));
        if (!line.subarray(0, ADDED_LINE.length).equals(ADDED_LINE)) return;
        const seq = jsonString(line, SEQ_JSON);
        if (seq) onEvent(Number(seq), Number(jsonString(line, SENT_JSON)));
      };
      const open = async () => {
        const res = await client.request('GET', path);
        if (res.statusCode !== 200) await collect(res, `watch ${path}`);
        res.on('data', lineSplitter(onLine));
        ended.push(
          new Promise<void>((resolve) => {
            res.once('error', (err) => {
              if (!stopping) errors.push(err);
              resolve();
            });
            res.once('close', () => {
              if (!stopping) errors.push(new Error('a REST watch ended before the benchmark stopped it'));
              resolve();
            });
          }),
        );
        responses.push(res);
      };
      try {
        // The server sends the headers once the watch is established: when the last of these
        // resolves, every watcher is in place.
        const batch = options.connectConcurrency ?? 25;
        for (let i = 0; i < count; i += batch)
          await Promise.all(Array.from({ length: Math.min(batch, count - i) }, open));
      } catch (err) {
        stopping = true;
        for (const r of responses) r.destroy();
        client.close();
        throw err;
      }
      return {
        async stop() {
          stopping = true;
          for (const r of responses) r.destroy();
          await Promise.all(ended);
          client.close();
          if (errors.length) throw errors[0];
        },
      };
    },
    write: typed.write,
  };
}

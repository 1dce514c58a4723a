/**
 * The Calls handler's bounds, with handlers that answer only when told: more than
 * MAX_CALLS_IN_FLIGHT unanswered calls are refused with a hint and never reach a handler, a
 * slot frees once an answer is handed to the connection, and a client that half-closes gets
 * its stream ended once everything it sent is answered. (test/grpc/callstream.test.ts drives
 * the real server and client.)
 */
import * as grpc from '@grpc/grpc-js';
import { EventEmitter } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { MAX_CALLS_IN_FLIGHT } from '../../client/grpc/callstream.js';
import { realClock } from '../../client/util/clock.js';
import { GetRequest, type CallRequest, type CallResult } from '../../proto/gen/kubelab/v1/api.js';
import { silentLogger } from '../logging.js';
import { callsHandler } from './calls.js';
import { TokenStore } from './tokens.js';
import { serverDefinition } from './wire.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** The server's end of a Calls stream as the handler uses it. */
class StandInStream extends EventEmitter {
  readonly results: CallResult[] = [];
  readonly flushes: Array<() => void> = [];
  readonly failures: Array<Partial<grpc.ServiceError>> = [];
  ended = false;
  constructor(readonly metadata: grpc.Metadata) {
    super();
  }
  write(result: CallResult, flushed: () => void): void {
    this.results.push(result);
    this.flushes.push(flushed);
  }
  end(): void {
    this.ended = true;
  }
}

/** A Calls stream on a real token store, whose Get calls are answered only when told. */
function openStream(closing?: AbortSignal): {
  stream: StandInStream;
  held: Array<() => void>;
  sendGet(id: number): void;
} {
  const dir = mkdtempSync(join(tmpdir(), 'kubelab-calls-'));
  dirs.push(dir);
  const tokens = new TokenStore(dir, realClock);
  const { token } = tokens.create({ name: 'agent', role: 'admin' });
  const held: Array<() => void> = [];
  const handlers = {
    get: (_call: unknown, answer: grpc.sendUnaryData<Buffer>) =>
      held.push(() => answer(null, Buffer.alloc(0))),
  };
  const handle = callsHandler({
    handlers,
    definition: serverDefinition(),
    tokens,
    logger: silentLogger(),
    closing,
  });
  const md = new grpc.Metadata();
  md.set('authorization', `Bearer ${token}`);
  const stream = new StandInStream(md);
  stream.on('error', (err: Partial<grpc.ServiceError>) => stream.failures.push(err));
  handle(stream as unknown as grpc.ServerDuplexStream<CallRequest, CallResult>);
  const request = Buffer.from(GetRequest.encode({ kind: 'Namespace', name: 'default' }).finish());
  return { stream, held, sendGet: (id) => stream.emit('data', { id, method: 'Get', request }) };
}

it('refuses calls past the limit without running them, and frees a slot per answer sent', () => {
  const { stream, held, sendGet: send } = openStream();
  for (let id = 1; id <= MAX_CALLS_IN_FLIGHT + 2; id++) send(id);
  expect(held.length).toBe(MAX_CALLS_IN_FLIGHT);
  expect(stream.results.map((r) => r.id)).toEqual([MAX_CALLS_IN_FLIGHT + 1, MAX_CALLS_IN_FLIGHT + 2]);
  expect(stream.results[0].code).toBe(grpc.status.RESOURCE_EXHAUSTED);
  expect(JSON.parse(Buffer.from(stream.results[0].status!).toString()).details.retryAfterSeconds).toBe(1);

  // Refusals count until they are handed to the connection too.
  send(100);
  expect(stream.results.at(-1)?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
  for (const flushed of stream.flushes.splice(0)) flushed();
  held.shift()!();
  expect(stream.results.at(-1)).toMatchObject({ id: 1 });
  send(101); // the answer to 1 is not handed over yet: still full
  expect(held.length).toBe(MAX_CALLS_IN_FLIGHT - 1);
  for (const flushed of stream.flushes.splice(0)) flushed();
  send(102);
  expect(held.length).toBe(MAX_CALLS_IN_FLIGHT);

  // Half-closed: the stream ends once the last answer went out.
  stream.emit('end');
  expect(stream.ended).toBe(false);
  for (const answer of held.splice(0)) answer();
  for (const flushed of stream.flushes.splice(0)) flushed();
  expect(stream.ended).toBe(true);
});

it('at shutdown runs no new call, answers those in flight, then ends the stream as Unavailable', () => {
  const closing = new AbortController();
  const { stream, held, sendGet } = openStream(closing.signal);
  sendGet(1);
  closing.abort();
  sendGet(2);
  expect(held.length).toBe(1);
  expect(stream.results).toMatchObject([{ id: 2, code: grpc.status.UNAVAILABLE }]);
  expect(stream.results[0].message).toContain('the control plane is shutting down; the call was not run');
  held.shift()!();
  expect(stream.results.map((r) => r.id)).toEqual([2, 1]);
  expect(stream.failures).toEqual([]);
  for (const flushed of stream.flushes.splice(0)) flushed();
  expect(stream.failures.map((f) => f.code)).toEqual([grpc.status.UNAVAILABLE]);
});

/**
 * The client's slots on a Calls stream: heartbeats (Lease and Node calls) are sent at once even
 * while the agent's other calls fill what the server takes in flight, and a call waiting for a
 * slot keeps its deadline. The stream here is a stand-in that records what is written and
 * answers when told; test/grpc/callstream.test.ts drives the real one over TLS.
 */
import { EventEmitter } from 'node:events';
import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { CallRequest, CallResult } from '../../proto/gen/kubelab/v1/api.js';
import { ApiError } from '../api/errors.js';
import { CallStream, HEARTBEAT_SLOTS, MAX_CALLS_IN_FLIGHT } from './callstream.js';

class StandInStream extends EventEmitter {
  readonly written: Array<{ id: number; kind: string }> = [];
  write(req: CallRequest): boolean {
    this.written.push({ id: req.id ?? 0, kind: JSON.parse(Buffer.from(req.request!).toString()).kind });
    return true;
  }
  cancel(): void {
    this.emit('status', { code: grpc.status.CANCELLED, details: 'Cancelled', metadata: new grpc.Metadata() });
  }
  answer(id: number): void {
    this.emit('data', { id, response: Buffer.from('{}') } satisfies CallResult);
  }
}

function callStream(timeoutMs = 30_000): { calls: CallStream; stream: StandInStream } {
  const stream = new StandInStream();
  const calls = new CallStream({
    open: () => stream as unknown as grpc.ClientDuplexStream<CallRequest, CallResult>,
    unary: () => Promise.reject(new Error('not here')),
    method: () => ({
      name: 'UpdateStatus',
      encode: (request) => Buffer.from(JSON.stringify(request)),
      decode: (bytes) => JSON.parse(bytes.toString()),
    }),
    toError: (code, details) =>
      new ApiError(code === grpc.status.DEADLINE_EXCEEDED ? 'Timeout' : 'Unavailable', details),
    timeoutMs,
  });
  return { calls, stream };
}

const settled = () => new Promise((r) => setImmediate(r));

afterEach(() => {
  vi.useRealTimers();
});

describe('a Calls stream full of pod status writes', () => {
  it('still sends Lease and Node calls at once, and the waiting writes as slots free up', async () => {
    const { calls, stream } = callStream();
    const others = MAX_CALLS_IN_FLIGHT - HEARTBEAT_SLOTS;
    const podWrites = Array.from({ length: others + 5 }, () => calls.call('updateStatus', { kind: 'Pod' }));
    expect(stream.written).toHaveLength(others);

    const renewal = calls.call('update', { kind: 'Lease' });
    const nodeStatus = calls.call('updateStatus', { kind: 'Node' });
    expect(stream.written.slice(-2).map((w) => w.kind)).toEqual(['Lease', 'Node']);
    stream.answer(stream.written.at(-2)!.id);
    stream.answer(stream.written.at(-1)!.id);
    await expect(renewal).resolves.toEqual({});
    await expect(nodeStatus).resolves.toEqual({});
    // The heartbeats' slots freed none of the pod writes' own.
    expect(stream.written).toHaveLength(others + 2);

    stream.answer(stream.written[0].id);
    await settled();
    expect(stream.written).toHaveLength(others + 3);
    expect(stream.written.at(-1)!.kind).toBe('Pod');

    for (const w of [...stream.written]) stream.answer(w.id);
    await settled();
    for (const w of stream.written.slice(others + 3)) stream.answer(w.id);
    await expect(Promise.all(podWrites)).resolves.toHaveLength(others + 5);
  });

  it('queues heartbeats only once every slot is taken, and sends them before the other waiting calls', async () => {
    const { calls, stream } = callStream();
    const ignored = () => undefined;
    for (let i = 0; i < MAX_CALLS_IN_FLIGHT - HEARTBEAT_SLOTS + 1; i++)
      calls.call('updateStatus', { kind: 'Pod' }).catch(ignored);
    for (let i = 0; i < HEARTBEAT_SLOTS; i++) calls.call('update', { kind: 'Lease' }).catch(ignored);
    expect(stream.written).toHaveLength(MAX_CALLS_IN_FLIGHT);
    calls.call('update', { kind: 'Lease' }).catch(ignored);
    expect(stream.written).toHaveLength(MAX_CALLS_IN_FLIGHT);

    stream.answer(stream.written[0].id); // a pod write's slot: the waiting Lease takes it
    await settled();
    expect(stream.written.at(-1)!.kind).toBe('Lease');
    expect(stream.written).toHaveLength(MAX_CALLS_IN_FLIGHT + 1);
    calls.close();
  });

  it('fails a call that waited for a slot past its deadline, and never sends it', async () => {
    vi.useFakeTimers();
    const { calls, stream } = callStream(1_000);
    for (let i = 0; i < MAX_CALLS_IN_FLIGHT - HEARTBEAT_SLOTS; i++)
      calls.call('updateStatus', { kind: 'Pod' }).catch(() => undefined);
    const late = calls.call('updateStatus', { kind: 'Pod' });
    const failure = late.catch((err: ApiError) => err);
    vi.advanceTimersByTime(1_000);
    const err = await failure;
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).reason).toBe('Timeout');
    // The calls in flight timed out at the same moment, freeing slots: the late one is not sent.
    expect(stream.written).toHaveLength(MAX_CALLS_IN_FLIGHT - HEARTBEAT_SLOTS);
  });
});

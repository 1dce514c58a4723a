/**
 * The standard health service answers bytes that are not a HealthCheckRequest with
 * INVALID_ARGUMENT and a message saying what to send, not INTERNAL, and keeps answering.
 */
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../support/controlplane.js';

let t: TestControlPlane;
let raw: grpc.Client;

beforeAll(async () => {
  t = await startTestControlPlane({ controllers: false });
  raw = new grpc.Client(`127.0.0.1:${t.cp.port}`, grpc.credentials.createSsl(Buffer.from(t.caPem)), {
    'grpc.ssl_target_name_override': 'localhost',
  });
});
afterAll(async () => {
  raw.close();
  await t.close();
});

const bytes = (b: Buffer) => b;
/** Two truncated varints and text with an invalid wire type: none decodes. */
const GARBAGE = [
  Buffer.from([0xff, 0xff, 0xff]),
  Buffer.from([0x08, 0xff]),
  Buffer.from('this is not protobuf at all'),
];
/** HealthCheckResponse { status: SERVING }. */
const SERVING = Buffer.from([0x08, 0x01]);

function check(request: Buffer): Promise<{ code: number; details: string; answer?: Buffer }> {
  return new Promise((resolve) =>
    raw.makeUnaryRequest('/grpc.health.v1.Health/Check', bytes, bytes, request, (err, answer) =>
      resolve({ code: err?.code ?? grpc.status.OK, details: err?.details ?? '', answer }),
    ),
  );
}

function watch(request: Buffer): Promise<{ code: number; details: string; first?: Buffer }> {
  return new Promise((resolve) => {
    const call = raw.makeServerStreamRequest('/grpc.health.v1.Health/Watch', bytes, bytes, request);
    call.on('data', (first: Buffer) => {
      call.cancel();
      resolve({ code: grpc.status.OK, details: '', first });
    });
    call.on('error', (err: grpc.ServiceError) => resolve({ code: err.code, details: err.details }));
  });
}

describe('grpc.health.v1.Health with bytes that do not decode', () => {
  it('Check answers INVALID_ARGUMENT saying what to send, then still answers SERVING', async () => {
    for (const garbage of GARBAGE) {
      const res = await check(garbage);
      expect(res.code).toBe(grpc.status.INVALID_ARGUMENT);
      expect(res.details).toContain('not a valid grpc.health.v1.HealthCheckRequest');
      expect(res.details).toContain('send a HealthCheckRequest');
    }
    expect((await check(Buffer.alloc(0))).answer).toEqual(SERVING);
  });

  it('Watch answers INVALID_ARGUMENT too, then still streams SERVING', async () => {
    for (const garbage of GARBAGE) {
      const res = await watch(garbage);
      expect(res.code).toBe(grpc.status.INVALID_ARGUMENT);
      expect(res.details).toContain('not a valid grpc.health.v1.HealthCheckRequest');
    }
    expect((await watch(Buffer.alloc(0))).first).toEqual(SERVING);
  });
});

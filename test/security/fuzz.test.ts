/**
 * Property-based fuzzing of the request messages clients send (Create, Update, Patch, List,
 * Watch, and bytes that are no message at all), as every identity, against a real
 * `kubelab server` process over TLS. Whatever the request, the answer is a well-formed status
 * with a code a client can act on (never INTERNAL or UNKNOWN) within a second, its message and
 * trailer small; the server stays up; and nothing is stored (admins' writes are dry runs).
 *
 * A fixed number of cases from a fixed seed runs in CI; FUZZ_SEED and FUZZ_RUNS explore more.
 */
import * as grpc from '@grpc/grpc-js';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GrpcCode } from '../../client/api/errors.js';
import { KINDS } from '../../client/api/kinds.js';
import {
  CreateRequest,
  ListRequest,
  PatchRequest,
  UpdateRequest,
  WatchRequest,
} from '../../proto/gen/kubelab/v1/api.js';
import { rawStream, rawUnary, type RawAnswer } from '../support/rawgrpc.js';
import { startServerWithIdentities, type ServerWithIdentities, type Who } from '../support/identities.js';
import type { ServerProcess } from '../support/serverproc.js';

const SEED = Number(process.env.FUZZ_SEED ?? 20261202);
const RUNS = Number(process.env.FUZZ_RUNS ?? 1000);

let target: ServerWithIdentities;
let server: ServerProcess;
let channel: grpc.Client;
let tokens: Record<Who, string>;

beforeAll(async () => {
  target = await startServerWithIdentities('fuzz-node');
  ({ server, channel, tokens } = target);
}, 120_000);

afterAll(() => target?.stop());

// ------------------------------------------------------------------------------ arbitraries

const long = (s: string) =>
  fc.integer({ min: 1_000, max: 300_000 }).map((n) => s.repeat(Math.ceil(n / s.length)));

const kind = fc.oneof(
  fc.constantFrom(...KINDS.flatMap((k) => [k.kind, k.plural, ...k.shortNames])),
  fc.string({ maxLength: 40 }),
  long('K'),
);

const name = fc.oneof(
  fc.constantFrom('default', 'kube-system', 'web', 'fuzz-node'),
  fc.string({ maxLength: 300 }),
  long('n'),
);

/** Text nested `depth` levels, in one of the ways JSON and YAML nest. */
const nested = fc
  .tuple(
    fc.integer({ min: 1, max: 20_000 }),
    fc.constantFrom('json-object', 'json-list', 'yaml-flow', 'yaml-block'),
  )
  .map(([depth, style]) => {
    switch (style) {
      case 'json-object':
        return '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
      case 'json-list':
        return '['.repeat(depth) + ']'.repeat(depth);
      case 'yaml-flow':
        return 'a: ' + '['.repeat(depth) + ']'.repeat(depth) + '\n';
      default:
        return 'a:\n  ' + '- '.repeat(depth) + 'x\n';
    }
  });

const yamlish = fc
  .array(
    fc.constantFrom(
      'a',
      ':',
      ' ',
      '-',
      '\n',
      '  ',
      '[',
      ']',
      '{',
      '}',
      ',',
      '&x',
      '*x',
      '"',
      "'",
      '|',
      '>',
      '#',
      '---',
      '!!str',
      '?',
      '0',
    ),
    {
      maxLength: 200,
    },
  )
  .map((parts) => parts.join(''));

const podManifest = fc
  .record({
    apiVersion: fc.constantFrom('v1', 'apps/v1', 'v2', ''),
    kind: fc.constantFrom('Pod', 'Namespace', 'Event', 'DaemonSet', 'Nope'),
    metadata: fc.record({
      name: name,
      labels: fc.dictionary(fc.string({ maxLength: 70 }), fc.string({ maxLength: 70 }), { maxKeys: 5 }),
    }),
    spec: fc.jsonValue({ maxDepth: 4 }),
  })
  .map((m) => JSON.stringify(m));

const manifest = fc.oneof(
  fc.json({ maxDepth: 6 }),
  podManifest,
  nested,
  yamlish,
  fc.string({ maxLength: 500 }),
  long('x'),
);

const pointer = fc.oneof(
  fc.constantFrom(
    '/metadata/labels/a',
    '/spec',
    '/metadata',
    '/__proto__/x',
    '/constructor/prototype/x',
    '/kind',
    '',
    '/',
  ),
  fc.array(fc.string({ maxLength: 10 }), { maxLength: 6 }).map((p) => '/' + p.join('/')),
);

const jsonPatch = fc
  .array(
    fc.record({
      op: fc.constantFrom('add', 'remove', 'replace', 'move', 'copy', 'test', 'nope'),
      path: pointer,
      from: pointer,
      value: fc.jsonValue({ maxDepth: 3 }),
    }),
    { maxLength: 30 },
  )
  .map((ops) => JSON.stringify(ops));

const patchText = fc.oneof(
  fc.json({ maxDepth: 6 }),
  jsonPatch,
  nested,
  fc.string({ maxLength: 200 }),
  long('{'),
);

const selector = fc.oneof(
  fc
    .array(
      fc.constantFrom(
        'a',
        'b',
        '=',
        '==',
        '!=',
        '!',
        ',',
        ' in ',
        ' notin ',
        '(',
        ')',
        ' ',
        'metadata.name',
        'spec.nodeName',
        '.',
        '/',
        '\\',
      ),
      {
        maxLength: 40,
      },
    )
    .map((parts) => parts.join('')),
  fc.string({ maxLength: 100 }),
  long('a in (b,'),
);

const resourceVersion = fc.oneof(
  fc.constantFrom('', '0', '1', '99999999999999', '-1', '1e3'),
  fc.string({ maxLength: 30 }),
  long('9'),
);
const continueToken = fc.oneof(
  fc.constant(''),
  fc.base64String({ maxLength: 200 }),
  fc
    .record({ v: fc.constantFrom(1, 2), rv: fc.integer(), after: fc.string({ maxLength: 50 }) })
    .map((t) => Buffer.from(JSON.stringify(t)).toString('base64url')),
);

const who = fc.constantFrom<Who>('join', 'viewer', 'node', 'admin');

/** How a request shows in a failure report (its bytes may be megabytes): replay it with the printed seed and path. */
function described(req: Request): Request {
  return Object.assign(req, {
    [fc.toStringMethod]: () =>
      `${req.method} as ${req.who}, ${req.bytes.length} bytes: ${req.bytes.subarray(0, 120).toString('hex')}…`,
  });
}

interface Request {
  who: Who;
  method: string;
  bytes: Buffer;
  stream?: boolean;
  /** Random bytes, not a message of the method's type. */
  garbage?: boolean;
}

const request: fc.Arbitrary<Request> = fc
  .oneof(
    fc.record({ who, kind, name, namespace: name, manifest }).map((r) => ({
      who: r.who,
      method: 'Create',
      bytes: Buffer.from(
        CreateRequest.encode({
          manifest: r.manifest,
          kind: r.kind,
          namespace: r.namespace,
          dryRun: true,
        }).finish(),
      ),
    })),
    fc.record({ who, name, manifest }).map((r) => ({
      who: r.who,
      method: 'Update',
      bytes: Buffer.from(UpdateRequest.encode({ manifest: r.manifest, name: r.name, dryRun: true }).finish()),
    })),
    fc
      .record({
        who,
        kind,
        name,
        patchType: fc.constantFrom('merge', 'json', 'application/merge-patch+json', 'strategic', ''),
        patch: patchText,
        subresource: fc.constantFrom('', 'status', 'scale'),
      })
      .map((r) => ({
        who: r.who,
        method: 'Patch',
        bytes: Buffer.from(PatchRequest.encode({ ...r, dryRun: true }).finish()),
      })),
    fc
      .record({
        who,
        kind,
        namespace: name,
        labelSelector: selector,
        fieldSelector: selector,
        limit: fc.integer({ min: -5, max: 1_000_000 }),
        continue: continueToken,
        resourceVersion,
        resourceVersionMatch: fc.constantFrom('', 'Exact', 'NotOlderThan', 'Nope'),
      })
      .map(({ who: w, ...r }) => ({
        who: w,
        method: 'List',
        bytes: Buffer.from(ListRequest.encode(r).finish()),
      })),
    fc
      .record({
        who,
        kind,
        namespace: name,
        labelSelector: selector,
        fieldSelector: selector,
        resourceVersion,
        allowWatchBookmarks: fc.boolean(),
        sendInitialEvents: fc.option(fc.boolean(), { nil: undefined }),
        timeoutSeconds: fc.integer({ min: -10, max: 10 }),
      })
      .map(({ who: w, ...r }) => ({
        who: w,
        method: 'Watch',
        bytes: Buffer.from(WatchRequest.encode(r).finish()),
        stream: true,
      })),
    fc
      .record({
        who,
        method: fc.constantFrom('Create', 'Update', 'UpdateStatus', 'Patch', 'List', 'Get', 'Delete', 'Bind'),
        bytes: fc.uint8Array({ maxLength: 300 }),
      })
      .map((r) => ({ ...r, bytes: Buffer.from(r.bytes), garbage: true })),
  )
  .map(described);

// ------------------------------------------------------------------------------ invariants

/** What a client can act on; INTERNAL (13), UNKNOWN (2) and UNAVAILABLE (14) are not among them. */
const ACTIONABLE = new Set<number>([
  GrpcCode.OK,
  GrpcCode.INVALID_ARGUMENT,
  GrpcCode.DEADLINE_EXCEEDED,
  GrpcCode.NOT_FOUND,
  GrpcCode.ALREADY_EXISTS,
  GrpcCode.PERMISSION_DENIED,
  GrpcCode.RESOURCE_EXHAUSTED,
  GrpcCode.FAILED_PRECONDITION,
  GrpcCode.ABORTED,
  GrpcCode.OUT_OF_RANGE,
]);

function checkAnswer(req: Request, answer: RawAnswer): void {
  const what = `${req.method} as ${req.who}: ${answer.code} ${answer.details.slice(0, 300)}`;
  expect(ACTIONABLE.has(answer.code), what).toBe(true);
  expect(answer.ms, what).toBeLessThan(1_000);
  expect(answer.details.length, what).toBeLessThan(4_096);
  if (answer.code !== GrpcCode.OK) {
    expect(answer.details.length, what).toBeGreaterThan(5);
    // grpc-js refuses an oversized message itself, without kubelab's trailer.
    if (answer.code !== GrpcCode.RESOURCE_EXHAUSTED || answer.status) {
      expect(answer.status?.reason, what).toBeTruthy();
      expect(answer.statusBytes, what).toBeLessThan(8 * 1024);
    }
  }
  // A join token is refused before anything it sent is read: only a request line that names
  // no resource to authorize (no or an unknown kind, no name) is answered otherwise.
  if (req.who === 'join' && !req.garbage) {
    const badRequestLine =
      (answer.code === GrpcCode.INVALID_ARGUMENT || answer.code === GrpcCode.NOT_FOUND) &&
      /^(unknown kind |kind is required|a \w+ name is required|subresource |\w+ have no status subresource)/.test(
        answer.details,
      );
    expect(answer.code === GrpcCode.PERMISSION_DENIED || badRequestLine, what).toBe(true);
  }
}

describe('fuzzed requests', () => {
  it(`answer every one of ${RUNS} requests with an actionable status within a second, store nothing, and keep the server up`, async () => {
    const revision = (await target.admin.list('Namespace')).resourceVersion;
    await fc.assert(
      fc.asyncProperty(request, async (req) => {
        const call = req.stream ? rawStream : rawUnary;
        const answer = await call(
          channel,
          `/kubelab.v1.Resources/${req.method}`,
          req.bytes,
          tokens[req.who],
          1_500,
        );
        checkAnswer(req, answer);
        expect(server.alive(), server.output()).toBe(true);
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
    expect(server.alive(), server.output()).toBe(true);
    expect((await target.admin.list('Namespace')).resourceVersion).toBe(revision);
  }, 600_000);
});

/**
 * Hostile input, sent as an attacker with the least privilege would (a join token handed to a
 * lab machine, a viewer token handed to a housemate, a node's own credential) and as an admin
 * whose client went wrong: manifests and patches nested 100 to 100,000 levels deep, YAML alias
 * and item bombs, 10 MB bodies, megabyte-long names, selectors, resourceVersions and kinds —
 * each twice, all at once, against a real `kubelab server` process over TLS. The server must
 * stay up, answer each with a well-formed status and the right code within a second, keep
 * answering a probe client quickly meanwhile, hold its memory, and store nothing.
 */
import * as grpc from '@grpc/grpc-js';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { WebSocket } from 'ws';
import { GrpcCode } from '../../client/api/errors.js';
import type { Client } from '../../client/client.js';
import {
  CreateRequest,
  GetRequest,
  ListRequest,
  PatchRequest,
  UpdateRequest,
  WatchRequest,
} from '../../proto/gen/kubelab/v1/api.js';
import { rawStream, rawUnary, type RawAnswer } from '../support/rawgrpc.js';
import {
  startServerWithIdentities,
  WHO,
  type ServerWithIdentities,
  type Who,
} from '../support/identities.js';
import type { ServerProcess } from '../support/serverproc.js';

const { INVALID_ARGUMENT, PERMISSION_DENIED, RESOURCE_EXHAUSTED, NOT_FOUND } = GrpcCode;

let target: ServerWithIdentities;
let server: ServerProcess;
let admin: Client;
let channel: grpc.Client;
let tokens: Record<Who, string>;

beforeAll(async () => {
  target = await startServerWithIdentities();
  ({ server, admin, channel, tokens } = target);
}, 120_000);

afterAll(() => target?.stop());

// ------------------------------------------------------------------------------ the inputs

const nestedJson = (depth: number) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
const nestedPod = (depth: number) =>
  `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"deep"},"spec":${nestedJson(depth)}}`;
const nestedYaml = (depth: number) =>
  `apiVersion: v1\nkind: Pod\nmetadata: {name: deep}\nspec: ${'['.repeat(depth)}${']'.repeat(depth)}\n`;
const blockYaml = (depth: number) =>
  `apiVersion: v1\nkind: Pod\nmetadata: {name: deep}\nspec:\n  ${'- '.repeat(depth)}x\n`;
const laughs = (() => {
  let y = 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: lol\n  labels: &a [x, x, x, x, x, x, x, x, x, x]\n';
  for (const [name, prev] of [
    ['b', 'a'],
    ['c', 'b'],
    ['d', 'c'],
    ['e', 'd'],
    ['f', 'e'],
    ['g', 'f'],
  ])
    y += `  ${name}: &${name} [${Array(10).fill(`*${prev}`).join(', ')}]\n`;
  return y;
})();
const itemBomb = `apiVersion: v1\nkind: Pod\nmetadata: {name: items}\nspec: [${'1,'.repeat(1_500_000)}1]\n`;
const tenMegabytes = 'x'.repeat(10 * 1024 * 1024);
const megabyte = 'n'.repeat(1024 * 1024);
const DEPTHS = [100, 1_000, 10_000, 100_000];

interface Case {
  name: string;
  call: (token: string) => Promise<RawAnswer>;
  /** The codes each identity may get. */
  expect: (who: Who) => number[];
}

const unary = (method: string, bytes: Uint8Array) => (token: string) =>
  rawUnary(channel, `/kubelab.v1.Resources/${method}`, Buffer.from(bytes), token);
const stream = (method: string, bytes: Uint8Array) => (token: string) =>
  rawStream(channel, `/kubelab.v1.Resources/${method}`, Buffer.from(bytes), token);
const create = (manifest: string, kind = '') =>
  unary('Create', CreateRequest.encode({ manifest, kind }).finish());
const update = (manifest: string) => unary('Update', UpdateRequest.encode({ manifest }).finish());
const patch = (patchType: string, text: string) =>
  unary(
    'Patch',
    PatchRequest.encode({ kind: 'Namespace', name: 'default', patchType, patch: text }).finish(),
  );

/** A write whose body is bad: refused before it is read unless the identity may write it; then the parser's limit. */
const writeRefused =
  (nodeMayWrite = false) =>
  (who: Who) =>
    who === 'admin' || (who === 'node' && nodeMayWrite)
      ? [INVALID_ARGUMENT, RESOURCE_EXHAUSTED]
      : [PERMISSION_DENIED];

const CASES: Case[] = [
  ...DEPTHS.flatMap((d): Case[] => [
    { name: `JSON manifest ${d} deep`, call: create(nestedPod(d)), expect: writeRefused() },
    {
      name: `JSON manifest ${d} deep, as an Event`,
      call: create(nestedPod(d), 'Event'),
      expect: writeRefused(true),
    },
    { name: `YAML flow manifest ${d} deep`, call: create(nestedYaml(d)), expect: writeRefused() },
    { name: `YAML block manifest ${d} deep`, call: update(blockYaml(d)), expect: writeRefused() },
    { name: `JSON list ${d} deep`, call: create('['.repeat(d) + ']'.repeat(d)), expect: writeRefused() },
    {
      name: `merge patch ${d} deep`,
      call: patch('merge', `{"metadata":${nestedJson(d)}}`),
      expect: writeRefused(),
    },
    {
      name: `JSON patch with a value ${d} deep`,
      call: patch('json', `[{"op":"add","path":"/metadata/labels","value":${nestedJson(d)}}]`),
      expect: writeRefused(),
    },
  ]),
  { name: 'YAML alias bomb', call: create(laughs), expect: writeRefused() },
  { name: 'YAML item bomb (1.5 million items)', call: create(itemBomb), expect: writeRefused() },
  {
    name: 'JSON patch of 20,000 operations',
    call: patch(
      'json',
      JSON.stringify(Array(20_000).fill({ op: 'test', path: '/kind', value: 'Namespace' })),
    ),
    expect: writeRefused(),
  },
  {
    name: 'JSON patch copying a value into itself over and over',
    call: patch(
      'json',
      JSON.stringify([
        { op: 'add', path: '/metadata/annotations', value: { a: 'x'.repeat(1000) } },
        ...Array.from({ length: 40 }, (_, i) => ({
          op: 'copy',
          from: '/metadata/annotations',
          path: `/metadata/annotations/c${i}`,
        })),
      ]),
    ),
    expect: writeRefused(),
  },
  {
    name: 'JSON patch moving a path into itself',
    call: patch('json', '[{"op":"move","from":"/metadata","path":"/metadata/labels/x"}]'),
    expect: writeRefused(),
  },
  {
    name: 'JSON patch through __proto__',
    call: patch('json', '[{"op":"add","path":"/__proto__/polluted","value":"yes"}]'),
    expect: writeRefused(),
  },
  {
    name: 'merge patch with __proto__',
    call: patch('merge', '{"__proto__":{"polluted":"yes"}}'),
    expect: writeRefused(),
  },
  { name: '10 MB manifest', call: create(tenMegabytes), expect: () => [RESOURCE_EXHAUSTED] },
  { name: '10 MB patch', call: patch('merge', tenMegabytes), expect: () => [RESOURCE_EXHAUSTED] },
  {
    name: '1 MB name',
    call: unary('Get', GetRequest.encode({ kind: 'Namespace', name: megabyte }).finish()),
    expect: (who) => (who === 'join' ? [PERMISSION_DENIED] : [NOT_FOUND]),
  },
  {
    name: '1 MB kind',
    call: unary('List', ListRequest.encode({ kind: megabyte }).finish()),
    expect: () => [INVALID_ARGUMENT],
  },
  {
    name: '1 MB resourceVersion',
    call: unary(
      'Get',
      GetRequest.encode({ kind: 'Namespace', name: 'default', resourceVersion: megabyte }).finish(),
    ),
    expect: (who) => (who === 'join' ? [PERMISSION_DENIED] : [INVALID_ARGUMENT]),
  },
  {
    name: '1 MB label selector',
    call: unary(
      'List',
      ListRequest.encode({ kind: 'Namespace', labelSelector: `a in (${'b,'.repeat(500_000)}c)` }).finish(),
    ),
    expect: (who) => (who === 'join' ? [PERMISSION_DENIED] : [INVALID_ARGUMENT]),
  },
  {
    name: '1 MB field selector on a watch',
    call: stream(
      'Watch',
      WatchRequest.encode({ kind: 'Namespace', fieldSelector: `metadata.name=${megabyte}` }).finish(),
    ),
    expect: (who) => (who === 'join' ? [PERMISSION_DENIED] : [INVALID_ARGUMENT]),
  },
  {
    name: '1 MB continue token',
    call: unary('List', ListRequest.encode({ kind: 'Namespace', continue: megabyte }).finish()),
    expect: (who) => (who === 'join' ? [PERMISSION_DENIED] : [INVALID_ARGUMENT]),
  },
  {
    name: 'bytes that are no protobuf',
    call: (token) =>
      rawUnary(
        channel,
        '/kubelab.v1.Resources/Create',
        Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 1]),
        token,
      ),
    expect: () => [INVALID_ARGUMENT],
  },
];

// ------------------------------------------------------------------------------ measuring

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/**
 * A client in its own process getting an object again and again until stopped (this process
 * is busy sending the flood, which would delay its own calls): the latencies it saw.
 */
async function probe(token: string): Promise<{ stop: () => Promise<number[]> }> {
  const request = Buffer.from(GetRequest.encode({ kind: 'Namespace', name: 'default' }).finish()).toString(
    'hex',
  );
  const child = spawn(
    process.execPath,
    [
      join(import.meta.dirname, '..', 'support', 'getprobe.mjs'),
      String(server.port),
      join(server.dataDir, 'pki', 'ca.crt'),
      token,
      request,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  while (out.split('\n').length < 4) await new Promise((r) => setTimeout(r, 20));
  const warm = out.length;
  return {
    stop: async () => {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill();
      await exited;
      const lines = out.slice(warm).trim().split('\n').filter(Boolean);
      for (const line of lines) expect(line, 'every probe call succeeds').toMatch(/^0 /);
      return lines.map((l) => Number(l.split(' ')[1]));
    },
  };
}

async function storeRevision(): Promise<string> {
  return (await admin.list('Namespace')).resourceVersion;
}

/**
 * Watches the server while a test floods it: whether it stays up, the latencies a probe client
 * in its own process sees, the highest resident memory, and the store's revision.
 */
async function watchServer(): Promise<{ expectHeldUp: (options: { memory: boolean }) => Promise<void> }> {
  const revision = await storeRevision();
  const rssBefore = server.rssBytes();
  let peak = rssBefore;
  const sampler = setInterval(() => {
    if (server.alive()) peak = Math.max(peak, server.rssBytes());
  }, 25);
  // Stopped also when the test fails before it asks whether the server held up.
  onTestFinished(() => clearInterval(sampler));
  const latency = await probe(tokens.viewer);
  return {
    async expectHeldUp({ memory }) {
      const probeLatencies = await latency.stop();
      clearInterval(sampler);
      expect(server.alive(), server.output()).toBe(true);
      peak = Math.max(peak, server.rssBytes());
      expect(probeLatencies.length).toBeGreaterThan(5);
      expect(
        percentile(probeLatencies, 99),
        `probe latencies: ${probeLatencies.map(Math.round).join(' ')}`,
      ).toBeLessThan(200);
      if (memory) expect(peak - rssBefore, `RSS ${rssBefore} → peak ${peak}`).toBeLessThan(100 * 1024 * 1024);
      expect(await storeRevision()).toBe(revision);
    },
  };
}

interface Sent {
  who: Who;
  c: Case;
  answer: RawAnswer;
}

/** Each case as every identity, twice, all at once. */
function flood(cases: Case[]): Promise<Sent[]> {
  return Promise.all(
    WHO.flatMap((who) =>
      cases.flatMap((c) => [0, 1].map(async () => ({ who, c, answer: await c.call(tokens[who]) }))),
    ),
  );
}

/** The right code, a message saying what went wrong and the trailer with the reason, both small. */
function expectWellFormed({ who, c, answer }: Sent): void {
  const what = `${c.name} as ${who}: ${answer.code} ${answer.details.slice(0, 200)}`;
  expect(c.expect(who), what).toContain(answer.code);
  expect(answer.details.length, what).toBeGreaterThan(10);
  expect(answer.details.length, what).toBeLessThan(4_096);
  // grpc-js itself refuses a message over the size limit, without kubelab's trailer.
  if (answer.code !== RESOURCE_EXHAUSTED || answer.status) {
    expect(answer.status?.reason, what).toBeTruthy();
    expect(answer.statusBytes, what).toBeLessThan(8 * 1024);
  }
}

// ------------------------------------------------------------------------------ the tests

describe('hostile input over gRPC', () => {
  it('answers each input, sent twice by every identity at once, within a second, while the server stays up, small, responsive and unchanged', async () => {
    // A first round warms the server up: code paths compiled, and its heap grown to what
    // serving these requests takes. What is measured is what the same flood adds to that.
    for (const c of CASES) await flood([c]);
    const watching = await watchServer();
    for (const c of CASES) {
      for (const sent of await flood([c])) {
        expectWellFormed(sent);
        expect(sent.answer.ms, `${c.name} as ${sent.who}`).toBeLessThan(1_000);
      }
    }
    await watching.expectHeldUp({ memory: true });
  }, 180_000);

  it('survives every input at once (some 250 MB in flight), answering each with the right code and storing nothing', async () => {
    // Memory here grows with what is in flight (each request's bytes are held until it is
    // answered), so it is bounded by the connection and stream caps, not asserted.
    const watching = await watchServer();
    const results = await flood(CASES);
    for (const sent of results) expectWellFormed(sent);
    await watching.expectHeldUp({ memory: false });
  }, 180_000);

  it('says what to do, and repeats no more of the input than a line', async () => {
    const deep = await create(nestedPod(5_000))(tokens.admin);
    expect(deep.details).toMatch(/nests more than 100 levels deep/);
    const bomb = await create(itemBomb)(tokens.admin);
    expect(bomb.details).toMatch(/more than 50000 YAML tokens .*send it as JSON/);
    const forbidden = await create(nestedPod(5_000))(tokens.viewer);
    expect(forbidden.details).toMatch(/viewer role may only get, list and watch; use an admin token/);
    const name = await unary(
      'Get',
      GetRequest.encode({ kind: 'Namespace', name: megabyte }).finish(),
    )(tokens.admin);
    expect(name.details).toMatch(/^Namespace "n+…\(\d+ more characters\)" not found$/);
    expect(name.details.length).toBeLessThan(400);
  });
});

// ------------------------------------------------------------------------------ the GUI bridge

interface BridgeAnswer {
  id: number;
  op: string;
  error?: { reason: string; message: string };
  /** When it arrived (performance.now()). */
  at: number;
}

async function openBridge(
  token: string,
): Promise<{ ws: WebSocket; answers: BridgeAnswer[]; closed: Promise<number> }> {
  const ws = new WebSocket(`ws://127.0.0.1:${server.uiPort}/bridge`, {
    headers: { authorization: `Bearer ${token}` },
    maxPayload: 64 * 1024 * 1024,
  });
  const answers: BridgeAnswer[] = [];
  ws.on('message', (data) =>
    answers.push({ ...(JSON.parse(data.toString()) as BridgeAnswer), at: performance.now() }),
  );
  const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return { ws, answers, closed };
}

describe('hostile input over the GUI bridge, as a viewer', () => {
  it('refuses every message quickly and keeps the connection, the server and the store as they were', async () => {
    const watching = await watchServer();
    const { ws, answers } = await openBridge(tokens.viewer);

    const deepObject = (d: number) =>
      JSON.parse('{"x":'.repeat(Math.min(d, 90)) + '1' + '}'.repeat(Math.min(d, 90))) as unknown;
    const messages: Array<{ text: string; reasons: string[] }> = [];
    let id = 0;
    const add = (body: Record<string, unknown> | string, reasons: string[]) => {
      id++;
      const text = typeof body === 'string' ? `{"id":${id},${body}` : JSON.stringify({ id, ...body });
      messages.push({ text, reasons });
    };
    for (const d of DEPTHS) {
      add({ op: 'apply', manifest: nestedPod(d) }, ['Forbidden']);
      add({ op: 'apply', manifest: nestedYaml(d) }, ['Forbidden']);
      // Nested deeper than an object may be: refused as the message is read (under its id).
      add(`"op":"create","object":${nestedPod(d)}}`, d <= 100 ? ['Forbidden'] : ['BadRequest']);
      add(
        `"op":"patch","kind":"Namespace","name":"default","patch":${nestedJson(d)}}`,
        d <= 100 ? ['Forbidden'] : ['BadRequest'],
      );
    }
    add(
      {
        op: 'create',
        object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: deepObject(90) },
      },
      ['Forbidden'],
    );
    add({ op: 'apply', manifest: laughs }, ['Forbidden']);
    add({ op: 'apply', manifest: itemBomb }, ['Forbidden']);
    add({ op: 'get', kind: 'Namespace', name: megabyte }, ['NotFound']);
    add({ op: 'list', kind: 'Namespace', options: { labelSelector: `a in (${'b,'.repeat(500_000)}c)` } }, [
      'BadRequest',
    ]);
    add({ op: 'watch', kind: 'Namespace', options: { fieldSelector: `metadata.name=${megabyte}` } }, [
      'BadRequest',
    ]);
    add({ op: 'list', kind: megabyte }, ['BadRequest']);
    add({ op: 'joinToken', ttlSeconds: 10 ** 12 }, ['BadRequest']);
    add({ op: 'createToken', role: 'admin' }, ['Forbidden']);

    const started = performance.now();
    for (const m of [...messages, ...messages]) ws.send(m.text);
    const deadline = Date.now() + 20_000;
    while (answers.filter((a) => a.op === 'error' || a.op === 'end').length < messages.length * 2) {
      if (Date.now() > deadline) throw new Error(`answers so far: ${JSON.stringify(answers).slice(0, 2000)}`);
      await new Promise((r) => setTimeout(r, 20));
    }

    for (const [i, m] of messages.entries()) {
      const got = answers.filter((a) => a.id === i + 1 && (a.op === 'error' || a.op === 'end'));
      expect(got, m.text.slice(0, 120)).toHaveLength(2);
      for (const a of got) {
        expect(m.reasons, `${m.text.slice(0, 120)} → ${JSON.stringify(a).slice(0, 300)}`).toContain(
          a.error?.reason,
        );
        expect(a.error!.message.length).toBeLessThan(4_096);
        // Within a second of the batch (every message, twice) being sent.
        expect(a.at - started, m.text.slice(0, 120)).toBeLessThan(1_000);
      }
    }
    expect(ws.readyState).toBe(WebSocket.OPEN);

    // A frame over the bridge's limit ends that connection (WebSocket 1009), nothing else.
    const big = await openBridge(tokens.viewer);
    big.ws.send(JSON.stringify({ id: 1, op: 'apply', manifest: tenMegabytes }));
    expect(await big.closed).toBe(1009);

    ws.close();
    await watching.expectHeldUp({ memory: true });
  }, 120_000);
});

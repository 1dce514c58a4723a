/** BridgeSession's message checks, and ending its streams from the server's side. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kindInfo } from '../../client/api/kinds.js';
import { watchEventsIn, type BridgeMessage } from '../../client/bridge/protocol.js';
import { bridgeHello } from '../../main/bridge/hello.js';
import { BridgeSession, malformed } from '../../main/bridge/session.js';
import { startTestControlPlane, type TestControlPlane } from '../support/controlplane.js';
import { eventually } from '../support/wait.js';

describe('malformed()', () => {
  const kinds = /is not a known kind \(Namespace, Node, Pod, .*\)$/;
  it.each<[string, unknown, string | RegExp | undefined]>([
    ['null', null, 'a message must be a JSON object'],
    ['a string', 'hello', 'a message must be a JSON object'],
    ['an array', [{ id: 1, op: 'hello' }], 'a message must be a JSON object'],
    ['no id', { op: 'hello' }, 'id: must be a positive integer'],
    ['id 0', { id: 0, op: 'hello' }, 'id: must be a positive integer'],
    ['a fractional id', { id: 1.5, op: 'hello' }, 'id: must be a positive integer'],
    ['a string id', { id: '1', op: 'hello' }, 'id: must be a positive integer'],
    ['no op', { id: 1 }, /^op: undefined is not one of hello, get, list, watch, create/],
    ['an unknown op', { id: 1, op: 'exec' }, /^op: "exec" is not one of/],
    ['hello', { id: 1, op: 'hello' }, undefined],
    ['get', { id: 1, op: 'get', kind: 'Pod', name: 'web', namespace: 'default' }, undefined],
    ['get without a name', { id: 1, op: 'get', kind: 'Pod' }, 'name: required for "get"'],
    ['get with an empty name', { id: 1, op: 'get', kind: 'Pod', name: '' }, 'name: required for "get"'],
    ['get of an unknown kind', { id: 1, op: 'get', kind: 'Gadget', name: 'x' }, kinds],
    ['list', { id: 1, op: 'list', kind: 'Node' }, undefined],
    ['list with options', { id: 1, op: 'list', kind: 'Node', options: { limit: 5 } }, undefined],
    ['list without a kind', { id: 1, op: 'list' }, /^kind: undefined is not a known kind/],
    [
      'list with options not an object',
      { id: 1, op: 'list', kind: 'Node', options: 'x' },
      'options: must be an object',
    ],
    ['watch', { id: 1, op: 'watch', kind: 'DaemonSet', options: { resourceVersion: '7' } }, undefined],
    [
      'watch with options an array',
      { id: 1, op: 'watch', kind: 'Pod', options: [] },
      'options: must be an object',
    ],
    ['create', { id: 1, op: 'create', object: { kind: 'Namespace' } }, undefined],
    ['create without an object', { id: 1, op: 'create' }, 'object: must be an object'],
    ['update with an array', { id: 1, op: 'update', object: [] }, 'object: must be an object'],
    ['updateStatus with a string', { id: 1, op: 'updateStatus', object: 'x' }, 'object: must be an object'],
    ['apply', { id: 1, op: 'apply', manifest: 'kind: Namespace' }, undefined],
    ['apply without a manifest', { id: 1, op: 'apply' }, 'manifest: required for "apply"'],
    ['patch', { id: 1, op: 'patch', kind: 'Node', name: 'pi', patch: { spec: {} } }, undefined],
    ['patch without a patch', { id: 1, op: 'patch', kind: 'Node', name: 'pi' }, 'patch: required'],
    ['patch without a name', { id: 1, op: 'patch', kind: 'Node', patch: {} }, 'name: required for "patch"'],
    ['delete', { id: 1, op: 'delete', kind: 'Node', name: 'pi' }, undefined],
    [
      'delete with bad options',
      { id: 1, op: 'delete', kind: 'Node', name: 'pi', options: 3 },
      'options: must be an object',
    ],
    ['logs', { id: 1, op: 'logs', namespace: 'default', name: 'web' }, undefined],
    ['logs without a namespace', { id: 1, op: 'logs', name: 'web' }, 'namespace: required for "logs"'],
    ['cancel', { id: 2, op: 'cancel', target: 1 }, undefined],
    ['cancel without a target', { id: 2, op: 'cancel' }, 'target: the id of the stream to cancel'],
    ['joinToken', { id: 1, op: 'joinToken', ttlSeconds: 3600 }, undefined],
    // A lifetime past year 275,760 is no date at all: the field is refused, not the server's clock.
    [
      'joinToken with an absurd lifetime',
      { id: 1, op: 'joinToken', ttlSeconds: 10 ** 12 },
      /^ttlSeconds: a whole number of seconds from 1 to 315360000/,
    ],
    [
      'a kind a megabyte long',
      { id: 1, op: 'list', kind: 'K'.repeat(1 << 20) },
      /^kind: "K{99}…\(1048478 more characters\) is not a known kind/,
    ],
  ])('%s', (_, message, want) => {
    const got = malformed(message);
    if (want instanceof RegExp) expect(got).toMatch(want);
    else expect(got).toBe(want);
  });
});

describe('BridgeSession', () => {
  let tcp: TestControlPlane;
  beforeAll(async () => {
    tcp = await startTestControlPlane({ plaintext: true, controllers: false });
  });
  afterAll(() => tcp?.close());

  const open = () => {
    const sent: BridgeMessage[] = [];
    const identity = { name: 'tester', role: 'admin' as const };
    const session = new BridgeSession(
      tcp.cp.client(identity),
      (m) => sent.push(m),
      bridgeHello(tcp.cp, identity),
      { readManifests: (text) => tcp.cp.api.manifests.readAll(text) },
    );
    return { session, sent };
  };

  it('answers a malformed message with BadRequest under its id when it has one', async () => {
    const { session, sent } = open();
    session.handle({ id: 7, op: 'get', kind: 'Pod' });
    session.handle('nonsense');
    expect(sent).toEqual([
      { id: 7, op: 'error', error: { reason: 'BadRequest', message: 'name: required for "get"' } },
      { id: 0, op: 'error', error: { reason: 'BadRequest', message: 'a message must be a JSON object' } },
    ]);
  });

  it('endStreams ends every stream with the error given and keeps the session usable', async () => {
    const { session, sent } = open();
    session.handle({ id: 1, op: 'watch', kind: 'Namespace', options: { resourceVersion: '0' } });
    session.handle({ id: 2, op: 'watch', kind: 'Node' });
    await eventually(
      () => sent.some((m) => m.id === 1 && watchEventsIn(m).length > 0),
      'the first watch to start',
    );
    const error = { reason: 'TooManyRequests', message: 'behind' };
    session.endStreams(error);
    await eventually(() => sent.filter((m) => m.op === 'end').length === 2, 'both streams to end');
    expect(sent.filter((m) => m.op === 'end')).toEqual(
      expect.arrayContaining([
        { id: 1, op: 'end', error },
        { id: 2, op: 'end', error },
      ]),
    );
    session.handle({ id: 3, op: 'hello' });
    await eventually(() => sent.some((m) => m.id === 3 && m.op === 'result'), 'hello');
    session.close();
  });

  it('sends a burst of changes in few messages, in order, each at most 500 events or about 256 KiB', async () => {
    const { session, sent } = open();
    const client = tcp.cp.client();
    const rv = (await client.list('Namespace')).resourceVersion;
    const cache = tcp.cp.api.cacher.cache(kindInfo('Namespace'));
    const before = cache.watcherCount;
    session.handle({ id: 1, op: 'watch', kind: 'Namespace', options: { resourceVersion: rv } });
    await eventually(() => cache.watcherCount > before, 'the watch to start');
    const names = Array.from({ length: 150 }, (_, i) => `burst-${String(i).padStart(3, '0')}`);
    await Promise.all(
      names.map((name) => client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } })),
    );
    const seen = () => sent.filter((m) => m.id === 1).flatMap(watchEventsIn);
    await eventually(() => seen().length === 150, 'every namespace to be seen');
    const rvs = seen().map((e) => Number(e.object.metadata?.resourceVersion));
    expect(rvs).toEqual([...rvs].sort((a, b) => a - b));
    expect(
      seen()
        .map((e) => e.object.metadata?.name)
        .sort(),
    ).toEqual(names);
    const messages = sent.filter((m) => m.id === 1);
    expect(messages.length).toBeLessThan(150);
    expect(messages.some((m) => m.op === 'events')).toBe(true);
    expect(messages.every((m) => watchEventsIn(m).length <= 500)).toBe(true);
    expect(messages.every((m) => JSON.stringify(m).length < 300 * 1024)).toBe(true);
    session.close();
  });

  it('sends nothing after close', async () => {
    const { session, sent } = open();
    session.handle({ id: 1, op: 'watch', kind: 'Namespace', options: { resourceVersion: '0' } });
    await eventually(() => sent.length > 0, 'the watch to start');
    session.close();
    const count = sent.length;
    await tcp.cp.client().create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'after-close' } });
    session.handle({ id: 2, op: 'hello' });
    await new Promise((r) => setTimeout(r, 100));
    expect(sent.length).toBe(count);
  });
});

/**
 * The GUI's stores against a real control plane through the bridge (a BridgeSession per
 * connection; the transport hands JSON across in-process, standing in for IPC or the
 * WebSocket): they fill from a list, follow watch events, resume after the connection drops
 * — objects created, changed and deleted meanwhile all show — and list again when the
 * resourceVersion they held has been compacted away.
 */
import { createPinia, setActivePinia } from 'pinia';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Pod } from '../../client/api/types.js';
import type { BridgeMessage, BridgeRequest } from '../../client/bridge/protocol.js';
import { BridgeSession } from '../../main/bridge/session.js';
import {
  BridgeClient,
  type BridgeTransport,
  type ConnectionState,
} from '../../renderer/src/bridge/client.js';
import { Informer } from '../../renderer/src/stores/informer.js';
import { usePods } from '../../renderer/src/stores/kinds.js';
import { startTestControlPlane, type TestControlPlane } from '../support/controlplane.js';
import { eventually } from '../support/wait.js';

/** A transport that can be cut and restored, like a WebSocket across a server restart or sleep. */
class LoopbackTransport implements BridgeTransport {
  private session: BridgeSession | undefined;
  private messageListener: ((m: BridgeMessage) => void) | undefined;
  private stateListener: ((s: ConnectionState) => void) | undefined;

  constructor(private readonly t: TestControlPlane) {}

  send(message: BridgeRequest): void {
    this.session?.handle(JSON.parse(JSON.stringify(message)));
  }
  onMessage(listener: (m: BridgeMessage) => void): void {
    this.messageListener = listener;
  }
  onState(listener: (s: ConnectionState) => void): void {
    this.stateListener = listener;
  }
  open(): void {
    this.session = new BridgeSession(
      this.t.cp.client(),
      (m) => queueMicrotask(() => this.messageListener?.(JSON.parse(JSON.stringify(m)) as BridgeMessage)),
      { protocol: 1, version: 'test', user: 'admin', server: { listen: '', store: 'sqlite' } },
    );
    this.stateListener?.('open');
  }
  cut(): void {
    this.session?.close();
    this.session = undefined;
    this.stateListener?.('closed');
  }
}

let t: TestControlPlane;
let transport: LoopbackTransport;
let bridge: BridgeClient;

const pod = (name: string, labels: Record<string, string> = {}): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default', labels },
  spec: { containers: [{ name: 'c', image: 'x' }] },
});

async function start(options: Parameters<typeof startTestControlPlane>[0] = {}): Promise<void> {
  t = await startTestControlPlane({ controllers: false, ...options });
  transport = new LoopbackTransport(t);
  bridge = new BridgeClient(transport);
  transport.open();
}

afterEach(async () => {
  await t.close();
});

describe('informer store', () => {
  beforeEach(async () => {
    setActivePinia(createPinia());
    await start();
  });

  it('fills from a list, then follows adds, changes and deletes', async () => {
    const admin = t.cp.client();
    await admin.create(pod('a'));
    const store = usePods();
    store.start(bridge);
    await eventually(() => store.synced && store.items.length === 1, 'the list');
    expect(store.status).toBe('live');

    await admin.create(pod('b'));
    await admin.patch('Pod', 'a', { metadata: { labels: { tier: 'web' } } }, { namespace: 'default' });
    await admin.delete('Pod', 'b', { namespace: 'default' });
    await admin.create(pod('c'));
    await eventually(
      () =>
        store.items
          .map((p) => p.metadata?.name)
          .sort()
          .join() === 'a,c' && store.get('default/a')?.metadata?.labels?.tier === 'web',
      'the watch events',
    );
    store.stop();
  });

  it('shows reconnecting while cut off, and resumes with what changed meanwhile', async () => {
    const admin = t.cp.client();
    await admin.create(pod('stays'));
    await admin.create(pod('goes'));
    await admin.create(pod('changes'));
    const store = usePods();
    store.start(bridge);
    await eventually(() => store.items.length === 3, 'the list');

    transport.cut();
    await eventually(() => store.status === 'reconnecting', 'reconnecting to show');
    await admin.delete('Pod', 'goes', { namespace: 'default' });
    await admin.patch('Pod', 'changes', { metadata: { labels: { v: '2' } } }, { namespace: 'default' });
    await admin.create(pod('new'));
    transport.open();

    await eventually(
      () =>
        store.status === 'live' &&
        store.items
          .map((p) => p.metadata?.name)
          .sort()
          .join() === 'changes,new,stays' &&
        store.get('default/changes')?.metadata?.labels?.v === '2',
      'the store to catch up',
    );
    store.stop();
  });
});

describe('informer relist', () => {
  it('lists again when its resourceVersion was compacted, delivering gap deletions as deletions', async () => {
    await start({ historyMs: 1 });
    const admin = t.cp.client();
    await admin.create(pod('old'));
    const informer = new Informer<Pod>(bridge, 'Pod', { retryMs: 50 });
    const deleted: string[] = [];
    informer.onChange((changes) => {
      for (const c of changes) if (c.type === 'DELETED') deleted.push(c.object.metadata!.name!);
    });
    informer.start();
    await eventually(() => informer.items.size === 1, 'the list');
    expect(informer.relists).toBe(1);

    transport.cut();
    await admin.delete('Pod', 'old', { namespace: 'default' });
    for (let i = 0; i < 20; i++) await admin.create(pod(`churn-${i}`));
    // The watch cache keeps 1 ms of history here: the informer's version is now too old.
    await new Promise((r) => setTimeout(r, 20));
    transport.open();

    await eventually(() => informer.items.size === 20 && informer.status === 'live', 'the relisted state');
    expect(deleted).toEqual(['old']);
    expect(informer.relists).toBe(2);
    informer.stop();
  });
});

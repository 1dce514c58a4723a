/**
 * The GUI's bridge to a real control plane without a browser: a transport that hands JSON to
 * a GuiSession in-process (standing in for IPC or the WebSocket) and can be cut and restored,
 * like a WebSocket across a server restart or sleep.
 */
import type { Identity } from '../../client/api/local.js';
import type { BridgeMessage, BridgeRequest } from '../../client/bridge/protocol.js';
import { guiSession, type GuiSession } from '../../main/bridge/guisession.js';
import { sessionFor } from '../../main/bridge/sessionfor.js';
import {
  BridgeClient,
  BridgeRequestError,
  type BridgeTransport,
  type ConnectionState,
} from '../../renderer/src/bridge/client.js';
import type { TestControlPlane } from '../support/controlplane.js';

export const ADMIN: Identity = { name: 'admin', role: 'admin' };

export class LoopbackTransport implements BridgeTransport {
  private session: GuiSession | undefined;
  private messageListener: ((m: BridgeMessage) => void) | undefined;
  private stateListener: ((s: ConnectionState) => void) | undefined;

  constructor(
    private readonly t: TestControlPlane,
    private readonly identity: Identity = ADMIN,
  ) {}

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
    const { cp } = this.t;
    const send = (m: BridgeMessage) =>
      queueMicrotask(() => this.messageListener?.(JSON.parse(JSON.stringify(m)) as BridgeMessage));
    this.session = guiSession(cp, this.identity, sessionFor(cp, this.identity, send), send);
    this.stateListener?.('open');
  }
  cut(): void {
    this.session?.close();
    this.session = undefined;
    this.stateListener?.('closed');
  }
}

/** A BridgeClient over an open LoopbackTransport. */
export function loopbackBridge(
  t: TestControlPlane,
  identity: Identity = ADMIN,
): { bridge: BridgeClient; transport: LoopbackTransport } {
  const transport = new LoopbackTransport(t, identity);
  const bridge = new BridgeClient(transport);
  transport.open();
  return { bridge, transport };
}

/** The error a request was refused with (the test fails if it was not refused). */
export async function rejection(request: Promise<unknown>): Promise<BridgeRequestError> {
  try {
    await request;
  } catch (err) {
    if (err instanceof BridgeRequestError) return err;
    throw err;
  }
  throw new Error('the request was not refused');
}

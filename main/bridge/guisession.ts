/**
 * A GUI connection's endpoint: the GUI ops (guiops.ts: info, node metrics history, tokens)
 * answered here, everything else handed to the connection's BridgeSession. Both transports
 * (IPC and WebSocket) talk to this, so a new GUI op needs no change to BridgeSession.
 */
import type { Identity } from '../../client/api/local.js';
import type { BridgeError, BridgeMessage } from '../../client/bridge/protocol.js';
import type { ControlPlane } from '../controlplane.js';
import { guiOps, isGuiOp, malformedGuiOp, type GuiOpsOptions, type GuiRequest } from './guiops.js';
import { toBridgeError, type BridgeSession } from './session.js';

/** What a transport needs of a connection's endpoint. */
export interface BridgeEndpoint {
  handle(raw: unknown): void;
  endStreams(error: BridgeError): void;
  close(): void;
}

export class GuiSession implements BridgeEndpoint {
  private closed = false;

  constructor(
    private readonly session: BridgeSession,
    private readonly send: (message: BridgeMessage) => void,
    private readonly ops: (req: GuiRequest) => Promise<unknown>,
  ) {}

  handle(raw: unknown): void {
    if (this.closed) return;
    if (!isGuiOp(raw)) {
      this.session.handle(raw);
      return;
    }
    const message = raw as Record<string, unknown>;
    const problem = malformedGuiOp(message);
    if (problem) {
      const id = typeof message.id === 'number' ? message.id : 0;
      this.reply({ id, op: 'error', error: { reason: 'BadRequest', message: problem } });
      return;
    }
    const req = raw as GuiRequest;
    this.ops(req).then(
      (value) => this.reply({ id: req.id, op: 'result', value }),
      (err: unknown) => this.reply({ id: req.id, op: 'error', error: toBridgeError(err) }),
    );
  }

  endStreams(error: BridgeError): void {
    this.session.endStreams(error);
  }

  close(): void {
    this.closed = true;
    this.session.close();
  }

  private reply(message: BridgeMessage): void {
    if (!this.closed) this.send(message);
  }
}

/** A GuiSession over `session`, answering GUI ops as `identity`. */
export function guiSession(
  cp: ControlPlane,
  identity: Identity,
  session: BridgeSession,
  send: (message: BridgeMessage) => void,
  options: GuiOpsOptions = {},
): GuiSession {
  return new GuiSession(session, send, guiOps(cp, identity, options));
}

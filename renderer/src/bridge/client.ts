/**
 * The GUI's side of the bridge (client/bridge/protocol.ts): requests with ids answered by
 * promises, and streams (watch, logs) delivered to callbacks until they end. The transport is
 * Electron IPC in the desktop app or a WebSocket in browser mode; when it drops, every pending
 * request fails and every stream ends with reason "Disconnected" — the stores resume.
 */
import type { BridgeError, BridgeMessage, BridgeRequest } from '../../../client/bridge/protocol.js';

/** unauthorized: the server refused the sign-in (a deleted token, a restarted server). */
export type ConnectionState = 'connecting' | 'open' | 'closed' | 'unauthorized';

export interface BridgeTransport {
  send(message: BridgeRequest): void;
  onMessage(listener: (message: BridgeMessage) => void): void;
  /** open: messages flow; closed: they do not (it may open again). */
  onState(listener: (state: ConnectionState) => void): void;
}

export class BridgeRequestError extends Error {
  readonly reason: string;
  readonly causes: NonNullable<BridgeError['causes']>;

  constructor(error: BridgeError) {
    super(error.message);
    this.reason = error.reason;
    this.causes = error.causes ?? [];
  }
}

/** Every request without its id. */
export type Request = BridgeRequest extends infer R
  ? R extends { id: number }
    ? Omit<R, 'id'>
    : never
  : never;

interface Pending {
  resolve(value: unknown): void;
  reject(err: BridgeRequestError): void;
}

interface StreamHandlers {
  onMessage(message: BridgeMessage): void;
  onEnd(error?: BridgeRequestError): void;
}

const DISCONNECTED: BridgeError = {
  reason: 'Disconnected',
  message: 'the connection to kubelab dropped; reconnecting',
};

export class BridgeClient {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly streams = new Map<number, StreamHandlers>();
  private readonly stateListeners = new Set<(state: ConnectionState) => void>();
  state: ConnectionState = 'connecting';

  constructor(private readonly transport: BridgeTransport) {
    transport.onMessage((m) => this.receive(m));
    transport.onState((state) => {
      this.state = state;
      if (state === 'closed' || state === 'unauthorized') this.failAll();
      for (const l of this.stateListeners) l(state);
    });
  }

  onState(listener: (state: ConnectionState) => void): () => void {
    this.stateListeners.add(listener);
    return () => this.stateListeners.delete(listener);
  }

  request<T>(req: Request): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      if (this.state === 'closed' || this.state === 'unauthorized') {
        reject(new BridgeRequestError(DISCONNECTED));
        return;
      }
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.transport.send({ ...req, id } as BridgeRequest);
    });
  }

  /** Starts a watch or log stream; returns its cancel function. */
  stream(req: Extract<Request, { op: 'watch' | 'logs' }>, handlers: StreamHandlers): () => void {
    const id = this.nextId++;
    if (this.state === 'closed' || this.state === 'unauthorized') {
      queueMicrotask(() => handlers.onEnd(new BridgeRequestError(DISCONNECTED)));
      return () => undefined;
    }
    this.streams.set(id, handlers);
    this.transport.send({ ...req, id } as BridgeRequest);
    return () => {
      if (!this.streams.delete(id)) return;
      if (this.state === 'open') this.transport.send({ id: this.nextId++, op: 'cancel', target: id });
    };
  }

  private receive(message: BridgeMessage): void {
    const stream = this.streams.get(message.id);
    if (stream) {
      if (message.op === 'end') {
        this.streams.delete(message.id);
        stream.onEnd(message.error && new BridgeRequestError(message.error));
      } else if (message.op === 'error') {
        this.streams.delete(message.id);
        stream.onEnd(new BridgeRequestError(message.error));
      } else {
        stream.onMessage(message);
      }
      return;
    }
    const pending = this.pending.get(message.id);
    if (!pending) return;
    this.pending.delete(message.id);
    if (message.op === 'error') pending.reject(new BridgeRequestError(message.error));
    else if (message.op === 'result') pending.resolve(message.value);
  }

  private failAll(): void {
    const err = new BridgeRequestError(DISCONNECTED);
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
    const streams = [...this.streams.values()];
    this.streams.clear();
    for (const s of streams) s.onEnd(err);
  }
}

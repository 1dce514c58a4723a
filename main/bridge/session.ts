/**
 * One GUI connection's side of the bridge (client/bridge/protocol.ts): requests are carried
 * out with a Client acting as the connection's identity; watches and log streams run until
 * they end or the GUI cancels them, and all of them stop when the connection closes. Bad
 * input gets an error message naming what is wrong; nothing a GUI sends can throw here.
 */
import { ApiError, echo, isAlreadyExists } from '../../client/api/errors.js';
import { KINDS } from '../../client/api/kinds.js';
import type { KubeObject, WatchEvent } from '../../client/api/types.js';
import type {
  BridgeError,
  BridgeHello,
  BridgeJoinToken,
  BridgeMessage,
  BridgeRequest,
} from '../../client/bridge/protocol.js';
import type { Client } from '../../client/client.js';
import { parseJson } from '../../client/parse/json.js';
import { DEFAULT_PARSE_LIMITS, SyntaxParseError, type ParseLimits } from '../../client/parse/limits.js';
import { TurnBatcher } from '../../client/util/turnbatcher.js';
import { parseApiError } from '../apiserver/manifests.js';
import { MAX_TTL_SECONDS } from './guiops.js';

const KIND_NAMES = new Set<string>(KINDS.map((k) => k.kind));

/** A message wraps an object (or a patch) one level deep, in at most a WebSocket frame's bytes. */
const MESSAGE_LIMITS: ParseLimits = {
  ...DEFAULT_PARSE_LIMITS,
  maxBytes: 4 * 1024 * 1024,
  maxDepth: DEFAULT_PARSE_LIMITS.maxDepth + 2,
};

/**
 * A watch's events cross the bridge at most 500, or about 256 KiB of JSON, to a message: small
 * enough that a GUI that falls behind is noticed (bridgeSender) before much is queued for it.
 */
const BRIDGE_BATCH = {
  maxItems: 500,
  maxSize: 256 * 1024,
  sizeOf: (event: WatchEvent) => JSON.stringify(event).length,
};

/** A message the GUI sent that cannot be read, and the id it led with (0 if none can be seen). */
export class UnreadableMessage extends Error {
  constructor(
    readonly id: number,
    readonly error: ApiError,
  ) {
    super(error.message);
  }
}

/**
 * One message from the GUI, parsed within limits (the browser's page is a client like any
 * other). A message that cannot be read is answered under its id when the text starts with
 * it, as the GUI writes them, so that the request gets its answer.
 */
export function parseBridgeMessage(text: string): unknown {
  try {
    return parseJson(text, MESSAGE_LIMITS, { what: 'the message' });
  } catch (err) {
    const id = Number(/^\s*\{\s*"id"\s*:\s*(\d{1,15})\s*,/.exec(text.slice(0, 64))?.[1] ?? 0);
    const error =
      err instanceof SyntaxParseError
        ? new ApiError('BadRequest', `not JSON (${err.message}): send one JSON object per message`)
        : parseApiError(err);
    throw new UnreadableMessage(
      id,
      error instanceof ApiError ? error : new ApiError('BadRequest', String(error)),
    );
  }
}

export function toBridgeError(err: unknown): BridgeError {
  if (err instanceof ApiError) {
    return { reason: err.reason, message: err.message, ...(err.causes.length ? { causes: err.causes } : {}) };
  }
  return { reason: 'InternalError', message: echo(err instanceof Error ? err.message : String(err), 2000) };
}

/** What a session can do beyond API calls, bound to its identity. */
export interface SessionCapabilities {
  /**
   * The documents of a manifest the GUI applies: authorized first (an identity that may not
   * write gets Forbidden before anything is parsed), then read within the parse limits.
   */
  readManifests: (text: string) => Promise<unknown[]>;
  /** Makes join tokens; absent for identities that may not (viewers). */
  joinTokens?: (ttlSeconds?: number) => BridgeJoinToken;
}

export class BridgeSession {
  private readonly streams = new Map<number, () => void>();
  /** Why a stream was ended from this side with an error (sent in its `end`). */
  private readonly endErrors = new Map<number, BridgeError>();
  private closed = false;

  constructor(
    private readonly client: Client,
    private readonly send: (message: BridgeMessage) => void,
    private readonly hello: BridgeHello,
    private readonly capabilities: SessionCapabilities,
  ) {}

  /** Takes one message from the GUI (already JSON-decoded). */
  handle(raw: unknown): void {
    if (this.closed) return;
    const problem = malformed(raw);
    if (problem) {
      const id = typeof (raw as { id?: unknown })?.id === 'number' ? (raw as { id: number }).id : 0;
      this.reply({ id, op: 'error', error: { reason: 'BadRequest', message: problem } });
      return;
    }
    const req = raw as BridgeRequest;
    if (req.op === 'cancel') {
      this.streams.get(req.target)?.();
      this.reply({ id: req.id, op: 'result', value: null });
      return;
    }
    if (req.op === 'watch' || req.op === 'logs') {
      void this.stream(req);
      return;
    }
    this.call(req).then(
      (value) => this.reply({ id: req.id, op: 'result', value }),
      (err: unknown) => this.reply({ id: req.id, op: 'error', error: toBridgeError(err) }),
    );
  }

  /**
   * Ends every running stream with `error` in its `end` message (the GUI fell too far behind,
   * or the computer woke from sleep); the connection stays usable and the GUI watches again.
   */
  endStreams(error: BridgeError): void {
    for (const [id, stop] of [...this.streams]) {
      this.endErrors.set(id, error);
      stop();
    }
  }

  /** Ends every stream of this connection. */
  close(): void {
    this.closed = true;
    for (const stop of this.streams.values()) stop();
    this.streams.clear();
  }

  private reply(message: BridgeMessage): void {
    if (!this.closed) this.send(message);
  }

  private async call(req: BridgeRequest): Promise<unknown> {
    const c = this.client;
    switch (req.op) {
      case 'hello':
        return this.hello;
      case 'get':
        return c.get(req.kind, req.name, { namespace: req.namespace });
      case 'list':
        return c.list(req.kind, req.options);
      case 'create':
        return c.create(req.object, req.options);
      case 'update':
        return c.update(req.object, req.options);
      case 'updateStatus':
        return c.updateStatus(req.object, req.options);
      case 'patch':
        return c.patch(req.kind, req.name, req.patch, req.options);
      case 'delete':
        return (await c.delete(req.kind, req.name, req.options)).object;
      case 'apply':
        return this.apply(req.manifest);
      case 'joinToken':
        if (!this.capabilities.joinTokens)
          throw new ApiError('Forbidden', 'only an admin may create join tokens');
        return this.capabilities.joinTokens(req.ttlSeconds);
      default:
        throw new ApiError('BadRequest', `unknown op "${(req as { op: string }).op}"`);
    }
  }

  /** Creates each document of a manifest, or replaces it when it exists (a simple `kubectl apply`). */
  private async apply(manifest: string): Promise<KubeObject[]> {
    const docs = await this.capabilities.readManifests(manifest);
    const objects: KubeObject[] = [];
    for (const [i, value] of docs.entries()) {
      if (value === null || value === undefined) continue;
      if (typeof value !== 'object' || Array.isArray(value)) {
        throw new ApiError(
          'BadRequest',
          `document ${i + 1} must be an object with apiVersion, kind and metadata`,
        );
      }
      objects.push(value as KubeObject);
    }
    if (!objects.length) throw new ApiError('BadRequest', 'the manifest is empty: paste at least one object');
    const applied: KubeObject[] = [];
    for (const obj of objects) {
      try {
        applied.push(await this.client.create(obj));
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
        const kind = obj.kind as Parameters<Client['get']>[0];
        const current = await this.client.get(kind, obj.metadata!.name!, {
          namespace: obj.metadata?.namespace,
        });
        applied.push(
          await this.client.update({
            ...obj,
            metadata: { ...obj.metadata, resourceVersion: current.metadata?.resourceVersion },
          } as KubeObject),
        );
      }
    }
    return applied;
  }

  private async stream(req: Extract<BridgeRequest, { op: 'watch' | 'logs' }>): Promise<void> {
    let stopped = false;
    let stop: () => void = () => {
      stopped = true;
    };
    this.streams.set(req.id, () => stop());
    let batch: TurnBatcher<WatchEvent> | undefined;
    try {
      if (req.op === 'watch') {
        const watch = await this.client.watch(req.kind, req.options);
        stop = () => {
          stopped = true;
          watch.stop();
        };
        if (stopped) watch.stop();
        // Events ready in the same turn cross the bridge as one message.
        batch = new TurnBatcher<WatchEvent>((events) => {
          if (stopped) return;
          this.reply(
            events.length === 1
              ? { id: req.id, op: 'event', event: events[0] }
              : { id: req.id, op: 'events', events },
          );
        }, BRIDGE_BATCH);
        for await (const event of watch) {
          // Once stopped, what the watch still holds is not wanted (cancel) or not affordable.
          if (stopped) break;
          batch.add(event);
        }
        batch.flush();
      } else {
        const logs = await this.client.logs(req.namespace, req.name, req.options);
        stop = () => {
          stopped = true;
          logs.stop();
        };
        if (stopped) logs.stop();
        const decoder = new TextDecoder();
        for await (const chunk of logs) {
          if (stopped) break;
          this.reply({ id: req.id, op: 'data', chunk: decoder.decode(chunk, { stream: true }) });
        }
      }
      const error = this.endErrors.get(req.id);
      this.reply(error ? { id: req.id, op: 'end', error } : { id: req.id, op: 'end' });
    } catch (err) {
      batch?.flush();
      this.reply({ id: req.id, op: 'end', error: toBridgeError(err) });
    } finally {
      this.streams.delete(req.id);
      this.endErrors.delete(req.id);
    }
  }
}

/** What is wrong with a message, or undefined when it has the shape its op needs. */
export function malformed(raw: unknown): string | undefined {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return 'a message must be a JSON object';
  const m = raw as Record<string, unknown>;
  if (typeof m.id !== 'number' || !Number.isInteger(m.id) || m.id <= 0)
    return 'id: must be a positive integer';
  const needString = (field: string) =>
    typeof m[field] === 'string' && m[field] !== ''
      ? undefined
      : `${field}: required for "${echo(String(m.op), 40)}"`;
  const needKind = () =>
    typeof m.kind === 'string' && KIND_NAMES.has(m.kind)
      ? undefined
      : `kind: ${echo(JSON.stringify(m.kind) ?? 'undefined')} is not a known kind (${[...KIND_NAMES].join(', ')})`;
  const needObject = (field: string) =>
    m[field] && typeof m[field] === 'object' && !Array.isArray(m[field])
      ? undefined
      : `${field}: must be an object`;
  const optionalObject = (field: string) => (m[field] === undefined ? undefined : needObject(field));
  switch (m.op) {
    case 'hello':
      return undefined;
    case 'get':
      return needKind() ?? needString('name');
    case 'list':
    case 'watch':
      return needKind() ?? optionalObject('options');
    case 'create':
    case 'update':
    case 'updateStatus':
      return needObject('object') ?? optionalObject('options');
    case 'apply':
      return needString('manifest');
    case 'patch':
      return (
        needKind() ??
        needString('name') ??
        (m.patch === undefined ? 'patch: required' : optionalObject('options'))
      );
    case 'delete':
      return needKind() ?? needString('name') ?? optionalObject('options');
    case 'logs':
      return needString('namespace') ?? needString('name') ?? optionalObject('options');
    case 'cancel':
      return typeof m.target === 'number' ? undefined : 'target: the id of the stream to cancel';
    case 'joinToken':
      return m.ttlSeconds === undefined ||
        (Number.isInteger(m.ttlSeconds) &&
          (m.ttlSeconds as number) > 0 &&
          (m.ttlSeconds as number) <= MAX_TTL_SECONDS)
        ? undefined
        : `ttlSeconds: a whole number of seconds from 1 to ${MAX_TTL_SECONDS} (ten years)`;
    default:
      return `op: ${echo(JSON.stringify(m.op) ?? 'undefined', 40)} is not one of hello, get, list, watch, create, update, updateStatus, apply, patch, delete, logs, joinToken, cancel`;
  }
}

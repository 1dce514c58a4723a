/**
 * The bridge between the GUI and the control plane: one protocol over two transports
 * (Electron IPC through the preload API, and a WebSocket for browser mode). The GUI sends
 * requests with ids; one-shot requests get one `result` or `error`; `watch` and `logs` are
 * streams that send `event`/`data` messages until `end` (or until the GUI sends `cancel`).
 * Many watches share one connection. Messages are plain JSON.
 */
import type { FieldError } from '../api/validation.js';
import type { KindName, KubeObject, WatchEvent } from '../api/types.js';
import type {
  DeleteOptions,
  ListOptions,
  LogsOptions,
  PatchOptions,
  WatchOptions,
  WriteOptions,
} from '../client.js';

export const BRIDGE_PROTOCOL_VERSION = 1;

export type BridgeRequest =
  | { id: number; op: 'hello' }
  | { id: number; op: 'get'; kind: KindName; name: string; namespace?: string }
  | { id: number; op: 'list'; kind: KindName; options?: ListOptions }
  | { id: number; op: 'watch'; kind: KindName; options?: WatchOptions }
  | { id: number; op: 'create' | 'update' | 'updateStatus'; object: KubeObject; options?: WriteOptions }
  /** Create or replace from a YAML or JSON manifest (the GUI's "Apply YAML"). */
  | { id: number; op: 'apply'; manifest: string }
  | { id: number; op: 'patch'; kind: KindName; name: string; patch: unknown; options?: PatchOptions }
  | { id: number; op: 'delete'; kind: KindName; name: string; options?: DeleteOptions }
  | { id: number; op: 'logs'; namespace: string; name: string; options?: LogsOptions }
  /** A fresh join token for a new machine (admins only), with the address agents should use. */
  | { id: number; op: 'joinToken'; ttlSeconds?: number }
  /** Ends the stream started by request `target`. */
  | { id: number; op: 'cancel'; target: number }
  /** How this control plane runs (the Settings view): answered for everyone, paths for admins. */
  | { id: number; op: 'info' }
  /** A node's recent NodeMetrics samples (the control plane keeps about 15 minutes). */
  | { id: number; op: 'nodeMetricsHistory'; name: string }
  /** Tokens and node credentials, never their secrets (admins only). */
  | { id: number; op: 'listTokens' }
  /** A new token (admins only); its secret is in the answer, once. 0 or no ttlSeconds: never expires (join: 24 h). */
  | {
      id: number;
      op: 'createToken';
      role: BridgeTokenRole;
      name?: string;
      description?: string;
      ttlSeconds?: number;
    }
  /** Revokes a token by its id (admins only): it stops working at once. */
  | { id: number; op: 'deleteToken'; tokenId: string }
  /** A kubeconfig for kubectl, Helm and k9s with a new token of its own (admins only). */
  | { id: number; op: 'kubeconfig'; role: 'admin' | 'viewer' };

export type BridgeOp = BridgeRequest['op'];

/** What a failed request carries: the API error's reason, message and failing fields. */
export interface BridgeError {
  reason: string;
  message: string;
  causes?: FieldError[];
}

export type BridgeMessage =
  | { id: number; op: 'result'; value: unknown }
  | { id: number; op: 'error'; error: BridgeError }
  | { id: number; op: 'event'; event: WatchEvent }
  /** Watch events that were ready together, in order (a busy server's, in one message). */
  | { id: number; op: 'events'; events: WatchEvent[] }
  /** A piece of a log, as UTF-8 text. */
  | { id: number; op: 'data'; chunk: string }
  /** A stream ended: normally, or with an error (e.g. Expired: list again). */
  | { id: number; op: 'end'; error?: BridgeError };

/** Where lab machines' agents should dial this control plane (the Add node view). */
export interface BridgeAgentAddress {
  /** https://host:port: where the server listens, or this machine's LAN address when it listens on every address. */
  url: string;
  /** false: the server listens on a loopback address only, so no other machine can reach it. */
  reachable: boolean;
}

/** What `joinToken` answers. */
export interface BridgeJoinToken {
  token: string;
  /** https://host:port of this control plane as a lab machine would reach it. */
  server: string;
  expiresInSeconds: number;
}

/** Roles a token can be created for from the GUI (node credentials come from joining). */
export type BridgeTokenRole = 'join' | 'admin' | 'viewer';

/** What `info` answers. Paths are only shown to admins. */
export interface BridgeInfo {
  version: string;
  user: string;
  role: string;
  /** sqlite or etcd. */
  store: string;
  etcdEndpoints?: string[];
  dataDir?: string;
  /** The gRPC API's address (host:port) as the server listens. */
  listen: string;
  /** false when the API runs without TLS (--plaintext, loopback only). */
  tls: boolean;
  caPath?: string;
  adminTokenPath?: string;
  /** Browser mode's address (http://127.0.0.1:6080), when the GUI is served to browsers. */
  uiAddress?: string;
  /** Where lab machines' agents should dial, and whether they can reach it. */
  agents: BridgeAgentAddress;
}

/** A token as `listTokens` shows it. */
export interface BridgeToken {
  id: string;
  role: string;
  name: string;
  nodeName?: string;
  createdAt: string;
  /** RFC 3339; absent: never expires. */
  expiresAt?: string;
  description?: string;
}

/** What `kubeconfig` answers: the document (YAML) and the token it holds, by id. */
export interface BridgeKubeconfig {
  kubeconfig: string;
  tokenId: string;
  role: 'admin' | 'viewer';
  /** The API address written into it. */
  server: string;
}

/** What `createToken` answers: the token, with its secret (a join token pins the CA). */
export interface BridgeCreatedToken extends BridgeToken {
  token: string;
}

/** What `hello` answers: who the GUI is talking to. */
export interface BridgeHello {
  protocol: number;
  version: string;
  /** The identity the bridge acts as (admin in the desktop app, the token's user in browser mode). */
  user: string;
  server: { listen: string; dataDir?: string; store: string };
}

/** The watch events a message carries, in order (none for a message that is not one). */
export function watchEventsIn(message: BridgeMessage): WatchEvent[] {
  if (message.op === 'event') return [message.event];
  if (message.op === 'events') return message.events;
  return [];
}

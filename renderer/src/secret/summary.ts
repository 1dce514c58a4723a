/**
 * Secrets as the GUI holds them: names, type and each key's size, never the values. The
 * Secrets store keeps only this summary of what it receives, so no value sits in the page's
 * memory, its views or its devtools; a Secret's page fetches one value when an admin reveals
 * it, and drops it when the page closes.
 *
 * Whether the user may read values follows the server's rule (main/apiserver/redaction.ts):
 * the bridge acts as the GUI's identity — the desktop app as its admin, a browser as the token
 * it signed in with — and a viewer gets every Secret with empty values and an annotation
 * saying why.
 */
import type { ObjectMeta, Secret } from '../../../client/api/types.js';
import type { ObjectLike } from '../stores/informer.js';
import { base64Bytes, base64Text } from '../util/base64.js';

/** What the server adds to a Secret whose values it withheld (main/apiserver/redaction.ts). */
export const REDACTED_ANNOTATION = 'kubelab.io/redacted';
/** kubectl apply keeps the whole manifest here — values included. */
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

export interface SecretKeyInfo {
  key: string;
  /** The value's size; undefined when the server withheld the value. */
  bytes?: number;
}

export interface SecretSummary {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  type: string;
  immutable: boolean;
  /** By key name. */
  keys: SecretKeyInfo[];
  /** The server withheld the values from this user (a viewer). */
  redacted: boolean;
}

/** Whether the server withheld this Secret's values: marked so, and every value empty. */
export function isRedacted(secret: Secret): boolean {
  return (
    secret.metadata?.annotations?.[REDACTED_ANNOTATION] !== undefined &&
    Object.values(secret.data ?? {}).every((v) => v === '')
  );
}

/** What the Secrets store keeps of a Secret received. */
export function secretSummary(received: ObjectLike): SecretSummary {
  const secret = received as Secret;
  const redacted = isRedacted(secret);
  const { [LAST_APPLIED]: _values, ...annotations } = secret.metadata?.annotations ?? {};
  return {
    apiVersion: secret.apiVersion,
    kind: secret.kind,
    metadata: { ...secret.metadata, annotations },
    type: secret.type || 'Opaque',
    immutable: secret.immutable === true,
    keys: Object.entries(secret.data ?? {})
      .map(([key, value]) => (redacted ? { key } : { key, bytes: base64Bytes(value) }))
      .sort((a, b) => a.key.localeCompare(b.key)),
    redacted,
  };
}

/** Only an admin reads Secret values: the server redacts them for viewers. */
export function canReadSecretValues(role: string | undefined): boolean {
  return role === 'admin';
}

/** What a user who may not read values sees in their place. */
export function hiddenText(role: string | undefined): string {
  return `hidden: your role${role ? ` (${role})` : ''} cannot read Secret values`;
}

/** One revealed value: as text, or as base64 when it is binary. */
export type Revealed =
  | { state: 'text'; text: string }
  | { state: 'binary'; base64: string; bytes: number }
  | { state: 'hidden' }
  | { state: 'missing' };

/** The value of `key` in a Secret fetched to reveal it. */
export function revealedValue(secret: Secret, key: string): Revealed {
  if (isRedacted(secret)) return { state: 'hidden' };
  const value = secret.data?.[key];
  if (value === undefined) return { state: 'missing' };
  const text = base64Text(value);
  return text === undefined
    ? { state: 'binary', base64: value, bytes: base64Bytes(value) }
    : { state: 'text', text };
}

/** What a key's value cell shows. */
export type ValueCell =
  | { show: 'value'; text: string; binary: boolean }
  | { show: 'reveal' }
  | { show: 'hidden'; text: string }
  | { show: 'missing' }
  /** The user's role is not known yet. */
  | { show: 'pending' };

/** The value cell for a key: revealed, a Reveal button, or why it stays hidden. */
export function valueCell(revealed: Revealed | undefined, role: string | undefined): ValueCell {
  switch (revealed?.state) {
    case 'text':
      return { show: 'value', text: revealed.text, binary: false };
    case 'binary':
      return { show: 'value', text: revealed.base64, binary: true };
    case 'missing':
      return { show: 'missing' };
    case 'hidden':
      return { show: 'hidden', text: hiddenText(role) };
  }
  if (role === undefined) return { show: 'pending' };
  return canReadSecretValues(role) ? { show: 'reveal' } : { show: 'hidden', text: hiddenText(role) };
}

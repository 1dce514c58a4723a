/**
 * The soak's loop, one round at a time on one control plane: a namespace with pods in it, bare
 * pods and a DaemonSet (a pod on every node) are created, waited for until Running, then deleted
 * — the DaemonSet in the background or in the foreground, every other round, and the namespace
 * with its pods still in it — and waited for until gone. Calls that meet a control plane being
 * restarted are sent again until it answers; anything else is recorded, never fatal: a soak goes
 * on and says at the end what was left.
 */
import { ApiError } from '../../client/api/errors.js';
import type { DaemonSet, KindMap, KindName, Namespace, Pod } from '../../client/api/types.js';
import type { Client } from '../../client/client.js';
import { fill } from './lib/workloads.js';
import { nowMs, sleep } from './lib/stats.js';

/** The namespace of the bare pods and the DaemonSets; a namespace per round holds the rest. */
export const SOAK_NAMESPACE = 'soak';
const ROUND_LABEL = 'soak-round';
/** How long a call is sent again while the control plane does not answer (a restart), ms. */
const CALL_PATIENCE_MS = 120_000;
const POLL_MS = 1000;

const TRANSIENT = new Set(['Unavailable', 'Timeout', 'TooManyRequests']);

/** Unavailable, timed out or rate limited, as an ApiError or a bare gRPC status. */
function isTransient(err: unknown): boolean {
  if (err instanceof ApiError) return TRANSIENT.has(err.reason);
  const code = (err as { code?: unknown }).code;
  return code === 14 || code === 4 || code === 1;
}

const reasonOf = (err: unknown) => (err instanceof ApiError ? err.reason : '');

/** Sends calls again while the control plane is away; counts that, and keeps what else failed. */
export class Caller {
  retries = 0;
  readonly errors: string[] = [];

  constructor(readonly client: Client) {}

  /**
   * `fn`, sent again while it fails transiently (≤ CALL_PATIENCE_MS). An error whose reason is in
   * `fine` counts as done (AlreadyExists on a create sent again, NotFound on a delete): undefined.
   * Any other failure is recorded and gives undefined too.
   */
  async call<T>(what: string, fn: () => Promise<T>, fine: string[] = []): Promise<T | undefined> {
    const t0 = nowMs();
    for (;;) {
      try {
        return await fn();
      } catch (err) {
        if (fine.includes(reasonOf(err))) return undefined;
        if (isTransient(err) && nowMs() - t0 < CALL_PATIENCE_MS) {
          this.retries++;
          await sleep(POLL_MS);
          continue;
        }
        this.errors.push(`${what}: ${(err as Error).message.slice(0, 300)}`);
        return undefined;
      }
    }
  }

  /** Every object of `kind` matching `options`, in pages of 500 (undefined: the list failed). */
  async listAll<K extends KindName>(
    kind: K,
    options: { namespace?: string; labelSelector?: string } = {},
  ): Promise<Array<KindMap[K]> | undefined> {
    const items: Array<KindMap[K]> = [];
    let cont: string | undefined;
    do {
      const page = await this.call(`list ${kind}`, () =>
        this.client.list(kind, { ...options, limit: 500, continue: cont }),
      );
      if (!page) return undefined;
      items.push(...page.items);
      cont = page.continue || undefined;
    } while (cont);
    return items;
  }
}

export interface RoundSettings {
  /** Nodes in the fleet: the DaemonSet's pods. */
  nodes: number;
  /** Bare pods in the soak namespace, and again in the round's namespace. */
  pods: number;
  /** How long to wait for Running, and then for gone, ms each. */
  waitMs: number;
}

export interface RoundResult {
  round: number;
  /** ms since the soak began. */
  startedAt: number;
  propagation: 'Background' | 'Foreground';
  /** Pods expected: the DaemonSet's (one a node) + bare + in the round's namespace. */
  expected: number;
  /** Most pods of the round seen Running at once, and when all were (ms after the round began). */
  running: number;
  runningMs?: number;
  /** From the deletes until the round's pods, namespace and DaemonSet were all gone (ms). */
  goneMs?: number;
  /** Pods of the round still there when the round gave up waiting. */
  left: number;
  /** Of the round's pods left, those being deleted (Terminating). */
  leftTerminating: number;
  /** The round's namespace still there (Terminating) when the round gave up. */
  namespaceLeft: boolean;
  ms: number;
  /** Calls sent again (the control plane was away) and calls that failed otherwise, in this round. */
  retries: number;
  errors: string[];
}

function roundPod(name: string, namespace: string, round: number, kind: string): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, labels: { [ROUND_LABEL]: String(round), 'soak-kind': kind } },
    spec: { containers: [{ name: 'main', image: 'soak/app:1' }] },
  };
}

function roundDaemonSet(round: number): DaemonSet {
  const labels = { app: `soak-ds-${round}`, [ROUND_LABEL]: String(round) };
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name: `soak-ds-${round}`, namespace: SOAK_NAMESPACE },
    spec: {
      selector: { matchLabels: { app: labels.app } },
      template: {
        metadata: { labels },
        spec: { containers: [{ name: 'agent', image: 'soak/node-agent:1' }] },
      },
    },
  };
}

export async function ensureSoakNamespace(c: Caller): Promise<void> {
  const ns: Namespace = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: SOAK_NAMESPACE } };
  await c.call('create namespace soak', () => c.client.create(ns), ['AlreadyExists']);
}

/** One round: create, wait until Running, delete, wait until gone (each wait ≤ `s.waitMs`). */
export async function runRound(
  c: Caller,
  round: number,
  soakT0: number,
  s: RoundSettings,
): Promise<RoundResult> {
  const t0 = nowMs();
  const retries0 = c.retries;
  const errors0 = c.errors.length;
  const ns = `soak-r${round}`;
  const dsName = `soak-ds-${round}`;
  const bare = Array.from({ length: s.pods }, (_, i) => `soak-r${round}-p${i}`);
  const inNs = Array.from({ length: s.pods }, (_, i) => `p${i}`);
  const propagation = round % 2 ? 'Foreground' : 'Background';
  const selector = `${ROUND_LABEL}=${round}`;
  const expected = s.nodes + 2 * s.pods;
  const created = ['AlreadyExists'];

  await c.call(
    `create namespace ${ns}`,
    () => c.client.create<Namespace>({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }),
    created,
  );
  await c.call(`create daemonset ${dsName}`, () => c.client.create(roundDaemonSet(round)), created);
  await fill(2 * s.pods, 8, (i) =>
    i < s.pods
      ? c.call(
          `create pod ${bare[i]}`,
          () => c.client.create(roundPod(bare[i], SOAK_NAMESPACE, round, 'bare')),
          created,
        )
      : c.call(
          `create pod ${ns}/${inNs[i - s.pods]}`,
          () => c.client.create(roundPod(inNs[i - s.pods], ns, round, 'namespaced')),
          created,
        ),
  );

  let running = 0;
  let runningMs: number | undefined;
  for (const until = nowMs() + s.waitMs; nowMs() < until; await sleep(POLL_MS)) {
    const pods = await c.listAll('Pod', { labelSelector: selector });
    const now = (pods ?? []).filter(
      (p) => p.status?.phase === 'Running' && !p.metadata?.deletionTimestamp,
    ).length;
    running = Math.max(running, now);
    if (now >= expected) {
      runningMs = nowMs() - t0;
      break;
    }
  }

  const d0 = nowMs();
  const gone = ['NotFound'];
  await c.call(
    `delete daemonset ${dsName}`,
    () => c.client.delete('DaemonSet', dsName, { namespace: SOAK_NAMESPACE, propagationPolicy: propagation }),
    gone,
  );
  await fill(s.pods, 8, (i) =>
    c.call(
      `delete pod ${bare[i]}`,
      () => c.client.delete('Pod', bare[i], { namespace: SOAK_NAMESPACE }),
      gone,
    ),
  );
  await c.call(`delete namespace ${ns}`, () => c.client.delete('Namespace', ns), gone);

  let left: Pod[] = [];
  let namespaceLeft = true;
  let goneMs: number | undefined;
  for (const until = nowMs() + s.waitMs; nowMs() < until; await sleep(POLL_MS)) {
    const pods = await c.listAll('Pod', { labelSelector: selector });
    if (!pods) continue;
    left = pods;
    namespaceLeft = (await exists(c, 'Namespace', ns)) !== false;
    const dsLeft = (await exists(c, 'DaemonSet', dsName, SOAK_NAMESPACE)) !== false;
    if (!left.length && !namespaceLeft && !dsLeft) {
      goneMs = nowMs() - d0;
      break;
    }
  }
  return {
    round,
    startedAt: t0 - soakT0,
    propagation,
    expected,
    running,
    runningMs,
    goneMs,
    left: goneMs === undefined ? left.length : 0,
    leftTerminating: goneMs === undefined ? left.filter((p) => p.metadata?.deletionTimestamp).length : 0,
    namespaceLeft: goneMs === undefined && namespaceLeft,
    ms: nowMs() - t0,
    retries: c.retries - retries0,
    errors: c.errors.slice(errors0),
  };
}

/** Whether the object exists (undefined: could not tell). */
async function exists(
  c: Caller,
  kind: 'Namespace' | 'DaemonSet',
  name: string,
  namespace?: string,
): Promise<boolean | undefined> {
  try {
    await c.client.get(kind, name, { namespace });
    return true;
  } catch (err) {
    return reasonOf(err) === 'NotFound' ? false : undefined;
  }
}

// ------------------------------------------------------------------------------ the end state

export interface EndState {
  /** Pods with a deletionTimestamp, anywhere. */
  terminating: Pod[];
  /** Namespaces being deleted (phase Terminating or a deletionTimestamp). */
  stuckNamespaces: Namespace[];
  /** What the loop deleted but is still there without being deleted: pods, DaemonSets, round namespaces. */
  leftovers: string[];
  /** The lists failed (the control plane did not answer). */
  unknown: boolean;
}

export async function endState(c: Caller): Promise<EndState> {
  const pods = await c.listAll('Pod');
  const namespaces = await c.listAll('Namespace');
  const sets = await c.listAll('DaemonSet', { namespace: SOAK_NAMESPACE });
  if (!pods || !namespaces || !sets)
    return { terminating: [], stuckNamespaces: [], leftovers: [], unknown: true };
  const deleting = (o: { metadata?: { deletionTimestamp?: string } }) => !!o.metadata?.deletionTimestamp;
  const leftovers = [
    ...pods
      .filter((p) => !deleting(p) && p.metadata?.labels?.[ROUND_LABEL] !== undefined)
      .map((p) => `pod ${p.metadata?.namespace}/${p.metadata?.name}`),
    ...sets.filter((d) => !deleting(d)).map((d) => `daemonset ${SOAK_NAMESPACE}/${d.metadata?.name}`),
    ...namespaces
      .filter(
        (n) =>
          /^soak-r\d+$/.test(n.metadata?.name ?? '') && !deleting(n) && n.status?.phase !== 'Terminating',
      )
      .map((n) => `namespace ${n.metadata?.name}`),
  ];
  return {
    terminating: pods.filter(deleting),
    stuckNamespaces: namespaces.filter((n) => deleting(n) || n.status?.phase === 'Terminating'),
    leftovers,
    unknown: false,
  };
}

export const endStateClean = (e: EndState) =>
  !e.unknown && !e.terminating.length && !e.stuckNamespaces.length && !e.leftovers.length;

/** Waits ≤ `ms` for a clean end state; returns the last one seen and how long it took. */
export async function drain(c: Caller, ms: number): Promise<{ state: EndState; ms: number }> {
  const t0 = nowMs();
  for (;;) {
    const state = await endState(c);
    if (endStateClean(state) || nowMs() - t0 >= ms) return { state, ms: nowMs() - t0 };
    await sleep(2000);
  }
}

/** One line per stuck pod: where it is, since when, what holds it. */
export function describePod(p: Pod, now = Date.now()): string {
  const m = p.metadata ?? {};
  const since = m.deletionTimestamp ? `${Math.round((now - Date.parse(m.deletionTimestamp)) / 1000)} s` : '?';
  const containers = (p.status?.containerStatuses ?? [])
    .map((cs) => `${cs.name}: ${Object.keys(cs.state ?? {}).join('/') || 'no state'}`)
    .join(', ');
  return (
    `${m.namespace}/${m.name} on ${p.spec?.nodeName || '(no node)'}, phase ${p.status?.phase ?? '?'}, Terminating for ${since}` +
    `${m.finalizers?.length ? `, finalizers ${m.finalizers.join(',')}` : ''}${containers ? ` (${containers})` : ''}` +
    `${m.ownerReferences?.length ? `, owned by ${m.ownerReferences.map((o) => `${o.kind}/${o.name}`).join(',')}` : ''}`
  );
}

export function describeNamespace(n: Namespace): string {
  const conds = (n.status?.conditions ?? [])
    .filter((c) => c.status === 'True')
    .map((c) => `${c.type}: ${c.message ?? c.reason ?? ''}`)
    .join('; ');
  return `${n.metadata?.name} (${n.status?.phase ?? '?'}${n.metadata?.finalizers?.length ? `, finalizers ${n.metadata.finalizers.join(',')}` : ''}${n.spec?.finalizers?.length ? `, spec.finalizers ${n.spec.finalizers.join(',')}` : ''})${conds ? `: ${conds}` : ''}`;
}

/**
 * Watch event → screen for bench:gui: changes made through the API one at a time, stamped here
 * (Date.now()) just before the write call, and seen in the page (lib/gui-page.ts: a
 * MutationObserver, then the next animation frame, stamped with the page's Date.now() — the
 * same clock, one machine). A Pod or Node informer of this process (gRPC, a connection of its
 * own) sees each change too, and the page stamps the bridge message that brings it (lib/gui-page.ts:
 * MESSAGE_PROBE_SCRIPT): write → that watch event is the server's and the bridge's share, the
 * watch event → screen the GUI's (the store's batching, Vue's render).
 *
 * Two kinds of change: a pod created in a namespace the Pods view is filtered to (a new row),
 * and a node of the Nodes table cordoned or uncordoned (its Status cell changes).
 */
import type { Page } from 'playwright-core';
import type { Node, Pod } from '../../../client/api/types.js';
import { SharedInformerFactory } from '../../../client/cache/factory.js';
import type { Client } from '../../../client/client.js';
import type { ChildControlPlane } from './child.js';
import { expectChange, NODES_VIEW, PODS_VIEW, seenChange, type SeenChange } from './gui-page.js';
import { boundPod, createIfAbsent, ensureNamespace } from './gui-pods.js';
import type { Cleanup } from './run.js';
import { log } from './run.js';
import { fmt, percentileSorted, sleep, sortedCopy } from './stats.js';

export interface ChangeSample {
  /** Date.now() just before the write call. */
  writeAt: number;
  /** The write call returned. */
  returnedAt: number;
  /** This process's informer delivered the change (undefined: not seen). */
  watchAt?: number;
  /** The page: the watch event handled, in the DOM, the next animation frame (undefined: not seen in time). */
  page?: SeenChange;
}

/** How long one change may take to show before it counts as missed. */
const SEEN_TIMEOUT_MS = 15_000;

/** Spaces the writes 300–800 ms apart (fixed pseudo-random) so they do not fall in step with the GUI's timers. */
function pause(i: number): Promise<void> {
  return sleep(300 + ((i * 7919) % 500));
}

async function rowCountText(page: Page, testid: string): Promise<string> {
  return (
    await page.locator(`[data-testid="${testid}"] [data-testid="row-count"]`).first().innerText()
  ).trim();
}

/**
 * Pods: the Pods view filtered to namespace `namespace` (one pod created first so that the menu
 * offers it), then `samples` pods created in it one at a time; each must appear as a row.
 */
export async function podChangeLatency(
  page: Page,
  cp: ChildControlPlane,
  client: Client,
  namespace: string,
  nodeNames: string[],
  samples: number,
  cleanup: Cleanup,
): Promise<ChangeSample[]> {
  await ensureNamespace(client, namespace);
  await createIfAbsent(client, boundPod(namespace, 'lat-first', nodeNames[0]));

  const factory = new SharedInformerFactory(cp.client(true));
  const informer = factory.informerFor('Pod', { namespace });
  const firstSeen = new Map<string, number>();
  informer.addEventHandler({ onAdd: (p: Pod) => void firstSeen.set(p.metadata!.name!, Date.now()) });
  cleanup.add('latency pod informer', () => factory.shutdown());
  factory.start();
  if (!(await factory.waitForCacheSync(60_000)))
    throw new Error('the latency Pod informer did not sync within 60 s');

  await page.click(`[data-view="${PODS_VIEW.view}"]`);
  const select = page.locator(`[data-testid="${PODS_VIEW.testid}"] select[aria-label="namespace"]`);
  // The menu gathers the namespaces when it gets the focus (not on every change of 50,000 pods).
  await page.waitForFunction(
    (ns) => {
      const s = document.querySelector<HTMLSelectElement>(
        '[data-testid="pods"] select[aria-label="namespace"]',
      );
      s?.focus();
      return !!s && Array.from(s.options).some((o) => o.value === ns);
    },
    namespace,
    { timeout: 30_000, polling: 500 },
  );
  await select.selectOption(namespace);
  await page
    .locator(`[data-testid="${PODS_VIEW.testid}"] [data-pod="lat-first"]`)
    .waitFor({ timeout: 30_000 });
  log(
    `pod changes: the Pods view is filtered to ${namespace} (${await rowCountText(page, PODS_VIEW.testid)} rows)`,
  );

  const out: ChangeSample[] = [];
  for (let i = 0; i < samples; i++) {
    const name = `lat-${i}`;
    const id = `pod-${i}`;
    await expectChange(
      page,
      id,
      { kind: 'Pod', includes: [`"name":"${name}"`] },
      `[data-testid="${PODS_VIEW.testid}"] [data-pod="${name}"]`,
    );
    const writeAt = Date.now();
    await createIfAbsent(client, boundPod(namespace, name, nodeNames[(i + 1) % nodeNames.length]));
    const returnedAt = Date.now();
    const seen = await seenChange(page, id, SEEN_TIMEOUT_MS);
    out.push({ writeAt, returnedAt, watchAt: firstSeen.get(name), page: seen });
    if (!seen) log(`pod changes: ${name} did not show within ${SEEN_TIMEOUT_MS / 1000} s`);
    await pause(i);
  }
  await cleanup.now('latency pod informer');
  return out;
}

/**
 * Nodes: the first node of the Nodes table (sorted by name, so in view) cordoned and uncordoned
 * in turn, `samples` times; each time its Status cell must change. It is left uncordoned.
 */
export async function nodeChangeLatency(
  page: Page,
  cp: ChildControlPlane,
  client: Client,
  samples: number,
  cleanup: Cleanup,
): Promise<{ node: string; samples: ChangeSample[] }> {
  await page.click(`[data-view="${NODES_VIEW.view}"]`);
  const firstRow = page.locator(`[data-testid="${NODES_VIEW.testid}"] [role="row"][aria-rowindex="1"]`);
  await firstRow.waitFor({ timeout: 30_000 });
  const node = (await firstRow.getAttribute(NODES_VIEW.rowAttr)) ?? '';
  if (!node) throw new Error('the first row of the Nodes table names no node');
  const cell = `[data-testid="${NODES_VIEW.testid}"] [data-node="${node}"] [data-col="status"]`;
  const base = (await page.locator(cell).innerText()).trim();
  if (base.includes('SchedulingDisabled')) throw new Error(`${node} is cordoned already ("${base}")`);

  const factory = new SharedInformerFactory(cp.client(true));
  const informer = factory.informerFor('Node', { fieldSelector: `metadata.name=${node}` });
  let waitingFor: boolean | undefined;
  let watchAt: number | undefined;
  const onNode = (n: Node) => {
    if (waitingFor !== undefined && !!n.spec?.unschedulable === waitingFor && watchAt === undefined)
      watchAt = Date.now();
  };
  informer.addEventHandler({ onAdd: onNode, onUpdate: (_old, n) => onNode(n) });
  cleanup.add('latency node informer', () => factory.shutdown());
  factory.start();
  if (!(await factory.waitForCacheSync(60_000)))
    throw new Error('the latency Node informer did not sync within 60 s');
  log(`node changes: cordoning and uncordoning ${node} (its Status reads "${base}")`);

  const out: ChangeSample[] = [];
  let cordoned = false;
  try {
    for (let i = 0; i < samples; i++) {
      const cordon = i % 2 === 0;
      const id = `node-${i}`;
      const named = `"name":"${node}"`;
      const unschedulable = '"unschedulable":true';
      await expectChange(
        page,
        id,
        cordon
          ? { kind: 'Node', includes: [named, unschedulable] }
          : { kind: 'Node', includes: [named], excludes: [unschedulable] },
        cell,
        cordon ? `${base},SchedulingDisabled` : base,
      );
      waitingFor = cordon;
      watchAt = undefined;
      const writeAt = Date.now();
      await client.patch('Node', node, { spec: { unschedulable: cordon } });
      cordoned = cordon;
      const returnedAt = Date.now();
      const seen = await seenChange(page, id, SEEN_TIMEOUT_MS);
      out.push({ writeAt, returnedAt, watchAt, page: seen });
      if (!seen)
        log(
          `node changes: ${cordon ? 'cordon' : 'uncordon'} #${i} did not show within ${SEEN_TIMEOUT_MS / 1000} s`,
        );
      await pause(i);
    }
  } finally {
    waitingFor = undefined;
    if (cordoned) await client.patch('Node', node, { spec: { unschedulable: false } });
    await cleanup.now('latency node informer');
  }
  log(`node changes: ${out.filter((s) => s.page).length}/${samples} seen`);
  return { node, samples: out };
}

/** ms from the write call to each stage, over the samples that reached it. */
export function stageTimes(samples: ChangeSample[]): {
  call: number[];
  watch: number[];
  /** Write → the watch event handled in the page. */
  pageEvent: number[];
  dom: number[];
  screen: number[];
  /** The watch event handled in the page → the screen: the GUI's share. */
  eventToScreen: number[];
  missed: number;
} {
  const seen = samples.filter((s) => s.page);
  const withEvent = seen.filter((s) => s.page!.eventAt !== undefined);
  return {
    call: samples.map((s) => s.returnedAt - s.writeAt),
    watch: samples.flatMap((s) => (s.watchAt !== undefined ? [s.watchAt - s.writeAt] : [])),
    pageEvent: withEvent.map((s) => s.page!.eventAt! - s.writeAt),
    dom: seen.map((s) => s.page!.domAt - s.writeAt),
    screen: seen.map((s) => s.page!.frameAt - s.writeAt),
    eventToScreen: withEvent.map((s) => s.page!.frameAt - s.page!.eventAt!),
    missed: samples.length - seen.length,
  };
}

export function describeStages(label: string, samples: ChangeSample[]): string {
  const t = stageTimes(samples);
  const p50 = (v: number[]) => fmt(percentileSorted(sortedCopy(v), 50), 0);
  return (
    `${label}: watch event in the page → screen p50 ${p50(t.eventToScreen)} ms, max ${fmt(Math.max(...t.eventToScreen), 0)} ms ` +
    `(${t.eventToScreen.length} events matched); write → screen p50 ${p50(t.screen)} ms, max ${fmt(Math.max(...t.screen), 0)} ms ` +
    `(write → watch p50 ${p50(t.watch)} ms); ${t.missed} missed`
  );
}

/**
 * Debian's Chromium for bench:gui, driven by playwright-core the way the GUI's end-to-end tests
 * drive it (test/e2e/support.ts: headless, the same flags, a 1280×800 page), signed in through
 * the link `kubelab server --ui` prints; and what Chrome DevTools Protocol tells about the
 * page: its JS heap after a full GC, its DOM counters, and the CPU time of Chromium's processes.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, CDPSession, Page } from 'playwright-core';
import { checkChromiumAndGui, launchChromium } from '../../support/chromium.js';
import { MESSAGE_PROBE_SCRIPT } from './gui-page.js';
import { memoryOf } from './proc.js';
import { topSelfTime } from './run.js';

export interface GuiBrowser {
  browser: Browser;
  page: Page;
  /** A DevTools session on the page (heap, DOM counters). */
  cdp: CDPSession;
  /** A DevTools session on the browser (its processes). */
  browserCdp: CDPSession;
  version: string;
  close(): Promise<void>;
}

/** Fails early, with what to do, when Chromium or the built GUI is missing. */
export const checkBrowserPrerequisites = checkChromiumAndGui;

export async function launchBrowser(): Promise<GuiBrowser> {
  const browser = await launchChromium();
  try {
    // en-US: the row count reads "5,000" whatever the machine's locale.
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: 'en-US' });
    // tsx compiles with esbuild's keepNames, which wraps the functions this bench hands to
    // page.evaluate in calls to a `__name` helper that exists only in Node: give the page one.
    await context.addInitScript({ content: 'globalThis.__name = (f) => f;' });
    await context.addInitScript({ content: MESSAGE_PROBE_SCRIPT });
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    const browserCdp = await browser.newBrowserCDPSession();
    return {
      browser,
      page,
      cdp,
      browserCdp,
      version: browser.version(),
      async close() {
        // A browser that does not close in time is killed by playwright when this process exits.
        await Promise.race([browser.close(), new Promise((r) => setTimeout(r, 10_000))]);
      },
    };
  } catch (err) {
    await browser.close();
    throw err;
  }
}

/** The address `kubelab server --ui` prints: the UI port and the token it keeps in <data-dir>/ui.token. */
export function guiUrl(uiPort: number, dataDir: string): string {
  const token = readFileSync(join(dataDir, 'ui.token'), 'utf8').trim();
  return `http://127.0.0.1:${uiPort}/?token=${encodeURIComponent(token)}`;
}

export interface HeapReading {
  /** ms since the period began. */
  atMs: number;
  /** Runtime.getHeapUsage after HeapProfiler.collectGarbage: the JS heap still reachable. */
  usedBytes: number;
  totalBytes: number;
  /** Blink's own garbage-collected heap (DOM wrappers' C++ side). */
  embedderBytes: number;
  domNodes: number;
  jsEventListeners: number;
  documents: number;
  /** Resident memory of Chromium's renderer processes (the page's), from /proc. */
  rendererRssBytes: number;
}

/** A full GC in the page, then its heap and DOM counters. */
export async function heapAfterGc(g: GuiBrowser, atMs: number): Promise<HeapReading> {
  await g.cdp.send('HeapProfiler.collectGarbage');
  const heap = await g.cdp.send('Runtime.getHeapUsage');
  const dom = await g.cdp.send('Memory.getDOMCounters');
  let rendererRssBytes = 0;
  for (const p of await chromiumProcesses(g))
    if (p.type === 'renderer') rendererRssBytes += memoryOf(p.id).rss;
  return {
    atMs,
    usedBytes: heap.usedSize,
    totalBytes: heap.totalSize,
    embedderBytes: heap.embedderHeapUsedSize,
    domNodes: dom.nodes,
    jsEventListeners: dom.jsEventListeners,
    documents: dom.documents,
    rendererRssBytes,
  };
}

export interface ChromiumProcess {
  type: string;
  id: number;
  cpuSeconds: number;
}

export async function chromiumProcesses(g: GuiBrowser): Promise<ChromiumProcess[]> {
  const info = await g.browserCdp.send('SystemInfo.getProcessInfo');
  return info.processInfo.map((p) => ({ type: p.type, id: p.id, cpuSeconds: p.cpuTime }));
}

/** CPU seconds by process type (browser, renderer, gpu, utility), summed. */
export async function chromiumCpuByType(g: GuiBrowser): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const p of await chromiumProcesses(g)) out[p.type] = (out[p.type] ?? 0) + p.cpuSeconds;
  return out;
}

/** Cores used by each Chromium process type between two readings `seconds` apart. */
export function coresBetween(
  before: Record<string, number>,
  after: Record<string, number>,
  seconds: number,
): Record<string, number> {
  return Object.fromEntries(Object.keys(after).map((k) => [k, (after[k] - (before[k] ?? 0)) / seconds]));
}

export interface PageProfile {
  path: string;
  /** The functions with the most samples of their own, in percent of all samples (idle included). */
  top: Array<{ fn: string; selfPct: number }>;
}

/**
 * Starts V8's sampling profiler in the page (for a window of the run); the returned function
 * stops it, writes `path` (open it in Chrome DevTools) and returns where the time went.
 */
export async function profilePage(g: GuiBrowser, path: string): Promise<() => Promise<PageProfile>> {
  await g.cdp.send('Profiler.enable');
  await g.cdp.send('Profiler.start');
  return async () => {
    const { profile } = await g.cdp.send('Profiler.stop');
    writeFileSync(path, JSON.stringify(profile));
    return { path, top: topSelfTime(profile, 12) };
  };
}

/**
 * What bench:gui measures inside the page, timed by the page itself so that the bench's round
 * trips through playwright add nothing: the time from a click on a view's navigation button to
 * the first animation frame that has the table's rows and its full row count; the frame rate
 * while a table scrolls; and the moment a change shows up in the DOM. Only data-testid and
 * data-* hooks and ARIA roles are used, never CSS classes (the views are still being polished).
 *
 * The functions given to page.evaluate run in the page: they may use only what they are passed.
 */
import type { Page } from 'playwright-core';

export interface TableView {
  /** The navigation button's data-view. */
  view: 'nodes' | 'pods';
  /** LiveTable's data-testid. */
  testid: string;
  /** The attribute rowAttrs puts on each row. */
  rowAttr: string;
}

export const NODES_VIEW: TableView = { view: 'nodes', testid: 'nodes', rowAttr: 'data-node' };
export const PODS_VIEW: TableView = { view: 'pods', testid: 'pods', rowAttr: 'data-pod' };

/** A first-render probe's state in the page (rAF timestamps, ms). */
interface RenderState {
  clickAt?: number;
  rowsAt?: number;
  countAt?: number;
  longestFrameMs: number;
  lastText?: string;
  done: boolean;
}

/** The change observer's state in the page (Date.now() times). */
interface ChangeState {
  expect?: { id: string; selector: string; text?: string };
  results: Record<string, { domAt: number; frameAt?: number }>;
  observer?: MutationObserver;
}

/**
 * The watch-event probe's state in the page: the bridge's WebSocket messages checked, before
 * the GUI's own handler runs, against the one message expected at a time (Date.now() times).
 */
interface MessageState {
  expect?: WatchMessage & { id: string };
  seen: Record<string, number>;
  /** The kind of each watch the page opened, by its request id. */
  watchKinds: Record<string, string>;
}

/**
 * A bridge message (JSON text) that carries an expected change: a watch event of a watch on
 * `kind`, with all of `includes` and none of `excludes` in its text.
 */
export interface WatchMessage {
  kind: string;
  includes: string[];
  excludes?: string[];
}

/** The page's own state for these probes (on window, under one name). */
interface ProbeWindow {
  guiBench?: { render?: RenderState; change?: ChangeState };
  guiBenchMessages?: MessageState;
}

/**
 * Run in every page before its own scripts (BrowserContext.addInitScript): the WebSocket the GUI
 * opens stamps the arrival of the expected watch event. The listener is added in the
 * constructor, before the GUI sets its own, so the stamp is taken first: the moment the page
 * handles the message, before the store's batching and the render.
 */
export const MESSAGE_PROBE_SCRIPT = `(() => {
  const state = { seen: {}, watchKinds: {} };
  window.guiBenchMessages = state;
  const Native = window.WebSocket;
  // The bridge replies {"id":…,"op":"event","event":…} to the watch request with that id.
  const eventOf = /^\\{"id":"?([^,"]*)"?,"op":"event"/;
  window.WebSocket = class extends Native {
    send(data) {
      if (typeof data === 'string' && data.includes('"op":"watch"')) {
        try {
          const m = JSON.parse(data);
          if (m.op === 'watch') state.watchKinds[String(m.id)] = m.kind;
        } catch {}
      }
      return super.send(data);
    }
    constructor(...args) {
      super(...args);
      this.addEventListener('message', (ev) => {
        const e = state.expect;
        if (!e || typeof ev.data !== 'string') return;
        const watch = eventOf.exec(ev.data.slice(0, 40));
        if (!watch || state.watchKinds[watch[1]] !== e.kind) return;
        if (!e.includes.every((s) => ev.data.includes(s))) return;
        if ((e.excludes || []).some((s) => ev.data.includes(s))) return;
        state.seen[e.id] = Date.now();
        state.expect = undefined;
      });
    }
  };
})();`;

export interface FirstRender {
  /** Click → the first frame with a row of the table in the DOM, ms. */
  rowsMs: number;
  /** Click → the first frame whose row count reads the expected total, ms. */
  countMs: number;
  /** Click → both: the figure reported. */
  readyMs: number;
  /** The longest gap between two frames meanwhile (how long the page was frozen), ms. */
  longestFrameMs: number;
}

/**
 * Clicks the view's navigation button and times, in the page, from the click event to the first
 * animation frame callback that finds the table's rows and the row count `expected` in the DOM
 * (that frame paints them: rAF callbacks run just before a frame's style, layout and paint).
 */
export async function timeFirstRender(
  page: Page,
  t: TableView,
  expected: number,
  timeoutMs: number,
): Promise<FirstRender> {
  await page.evaluate(
    ({ view, testid, rowAttr, expected }) => {
      const w = window as unknown as ProbeWindow;
      const state: RenderState = { longestFrameMs: 0, done: false };
      (w.guiBench ??= {}).render = state;
      // From the click: a render that blocks the page delays the first frame after it.
      let last = 0;
      const frame = (ts: number) => {
        if (state.done) return;
        state.longestFrameMs = Math.max(state.longestFrameMs, ts - last);
        last = ts;
        // The callback's own time, not the frame's start (ts): a click handled early in a frame
        // can be followed by that same frame's callbacks, whose ts is before the click.
        const at = performance.now();
        const section = document.querySelector(`[data-testid="${testid}"]`);
        if (section && state.rowsAt === undefined && section.querySelector(`[role="grid"] [${rowAttr}]`))
          state.rowsAt = at;
        const text = section?.querySelector('[data-testid="row-count"]')?.textContent ?? '';
        state.lastText = text;
        // "5,000" (every row shown) rather than "12 of 5,000" (a filter on): digits only.
        if (
          state.countAt === undefined &&
          /^[\d,]+$/.test(text.trim()) &&
          Number(text.replace(/\D/g, '')) === expected
        )
          state.countAt = at;
        if (state.rowsAt !== undefined && state.countAt !== undefined) state.done = true;
        else requestAnimationFrame(frame);
      };
      // Capture phase: the time is taken before the app's own handler starts rendering the view.
      const onClick = (e: MouseEvent) => {
        if (!(e.target instanceof Element) || !e.target.closest(`[data-view="${view}"]`)) return;
        document.removeEventListener('click', onClick, { capture: true });
        state.clickAt = last = e.timeStamp;
        requestAnimationFrame(frame);
      };
      document.addEventListener('click', onClick, { capture: true });
    },
    { view: t.view, testid: t.testid, rowAttr: t.rowAttr, expected },
  );
  await page.click(`[data-view="${t.view}"]`);
  try {
    await page.waitForFunction(
      () => (window as unknown as ProbeWindow).guiBench?.render?.done === true,
      undefined,
      {
        timeout: timeoutMs,
        polling: 100,
      },
    );
  } catch {
    const s = await page.evaluate(() => (window as unknown as ProbeWindow).guiBench?.render);
    throw new Error(
      `the ${t.view} view did not show its rows and a row count of ${expected.toLocaleString('en-US')} within ${timeoutMs / 1000} s ` +
        `(rows ${s?.rowsAt !== undefined ? 'shown' : 'not shown'}, the count read "${s?.lastText ?? ''}")`,
    );
  }
  const s = (await page.evaluate(() => (window as unknown as ProbeWindow).guiBench?.render))!;
  const rowsMs = s.rowsAt! - s.clickAt!;
  const countMs = s.countAt! - s.clickAt!;
  return { rowsMs, countMs, readyMs: Math.max(rowsMs, countMs), longestFrameMs: s.longestFrameMs };
}

export interface ScrollRun {
  /** Time between consecutive animation frames, ms. */
  frameMs: number[];
  seconds: number;
  /** Pixels scrolled in all (down, and back up when the end was reached). */
  distancePx: number;
  rowHeightPx: number;
  /** The table's scrollable height, and the height of its view, px. */
  scrollHeightPx: number;
  viewHeightPx: number;
  /** At the end, the first row in the DOM matched the scroll position (the rows followed it). */
  rowsFollowed: boolean;
}

/**
 * Scrolls the table's grid for `durationMs` at `pxPerSec`, by setting scrollTop in every
 * animation frame (in proportion to the time since the last one, as a wheel or a fling would),
 * turning back at either end, and records every frame's interval. Setting scrollTop from the
 * main thread makes each frame wait for the virtualiser's re-render: a frame the page cannot
 * render in time shows as a long interval, which compositor-only scrolling would hide.
 */
export async function scrollTable(
  page: Page,
  t: TableView,
  durationMs: number,
  pxPerSec: number,
): Promise<ScrollRun> {
  return page.evaluate(
    ({ testid, rowAttr, durationMs, pxPerSec }) =>
      new Promise<ScrollRun>((resolve, reject) => {
        const grid = document.querySelector<HTMLElement>(`[data-testid="${testid}"] [role="grid"]`);
        const firstRow = () => grid?.querySelector<HTMLElement>(`[${rowAttr}]`);
        if (!grid || !firstRow()) {
          reject(new Error(`no rows in the ${testid} table to scroll`));
          return;
        }
        const rowHeightPx = firstRow()!.getBoundingClientRect().height;
        const frameMs: number[] = [];
        let start = 0;
        let last = 0;
        let distancePx = 0;
        let direction = 1;
        const frame = (ts: number) => {
          if (!start) {
            start = last = ts;
            requestAnimationFrame(frame);
            return;
          }
          frameMs.push(ts - last);
          const max = grid.scrollHeight - grid.clientHeight;
          let next = grid.scrollTop + (direction * pxPerSec * (ts - last)) / 1000;
          if (next >= max || next <= 0) {
            direction = -direction;
            next = Math.max(0, Math.min(max, next));
          }
          distancePx += Math.abs(next - grid.scrollTop);
          grid.scrollTop = next;
          last = ts;
          if (ts - start < durationMs) {
            requestAnimationFrame(frame);
            return;
          }
          // Let the last scroll render, then check that the rows in the DOM are the ones in view.
          requestAnimationFrame(() => {
            const rows = Array.from(grid.querySelectorAll<HTMLElement>('[role="row"][aria-rowindex]'));
            const first = Math.min(...rows.map((r) => Number(r.getAttribute('aria-rowindex'))));
            const expectedFirst = Math.floor(grid.scrollTop / rowHeightPx) + 1;
            resolve({
              frameMs,
              seconds: (ts - start) / 1000,
              distancePx,
              rowHeightPx,
              scrollHeightPx: grid.scrollHeight,
              viewHeightPx: grid.clientHeight,
              // The virtualiser keeps a few rows above the view (its overscan).
              rowsFollowed: first <= expectedFirst && expectedFirst - first <= 20,
            });
          });
        };
        requestAnimationFrame(frame);
      }),
    { testid: t.testid, rowAttr: t.rowAttr, durationMs, pxPerSec },
  );
}

/** Scrolls the table back to its top (before a measurement that needs its first rows). */
export async function scrollToTop(page: Page, t: TableView): Promise<void> {
  await page.evaluate((testid) => {
    const grid = document.querySelector<HTMLElement>(`[data-testid="${testid}"] [role="grid"]`);
    if (grid) grid.scrollTop = 0;
  }, t.testid);
}

/**
 * Starts watching the page's DOM for expected changes (see expectChange): a MutationObserver
 * on the whole document, checking only the one change expected at a time.
 */
export async function startChangeObserver(page: Page): Promise<void> {
  await page.evaluate(() => {
    const w = window as unknown as ProbeWindow;
    const state: ChangeState = { results: {} };
    (w.guiBench ??= {}).change = state;
    const check = () => {
      const e = state.expect;
      if (!e) return;
      const el = document.querySelector(e.selector);
      if (!el || (e.text !== undefined && el.textContent?.trim() !== e.text)) return;
      // Date.now(): the bench stamps its writes with the same clock (one machine).
      const result: { domAt: number; frameAt?: number } = { domAt: Date.now() };
      state.results[e.id] = result;
      state.expect = undefined;
      // The next animation frame is the one that paints the change.
      requestAnimationFrame(() => (result.frameAt = Date.now()));
    };
    state.observer = new MutationObserver(check);
    state.observer.observe(document.body, {
      subtree: true,
      childList: true,
      characterData: true,
      attributes: true,
    });
  });
}

export async function stopChangeObserver(page: Page): Promise<void> {
  await page.evaluate(() => (window as unknown as ProbeWindow).guiBench?.change?.observer?.disconnect());
}

/**
 * Expects an element matching `selector` (with this text, if given) to appear, brought by the
 * bridge message `message`; fails if it is there already (the change would not be seen).
 */
export async function expectChange(
  page: Page,
  id: string,
  message: WatchMessage,
  selector: string,
  text?: string,
): Promise<void> {
  const already = await page.evaluate(
    ({ id, message, selector, text }) => {
      const w = window as unknown as ProbeWindow;
      const state = w.guiBench!.change!;
      const el = document.querySelector(selector);
      if (el && (text === undefined || el.textContent?.trim() === text)) return true;
      state.expect = { id, selector, text };
      if (w.guiBenchMessages) w.guiBenchMessages.expect = { id, ...message };
      return false;
    },
    { id, message, selector, text },
  );
  if (already)
    throw new Error(`${selector}${text ? ` reading "${text}"` : ''} is in the page before the change`);
}

export interface SeenChange {
  /** Date.now() when the page handled the bridge message with the watch event (undefined: not matched). */
  eventAt?: number;
  /** Date.now() when the MutationObserver saw the change in the DOM. */
  domAt: number;
  /** Date.now() at the start of the next animation frame: when it reached the screen. */
  frameAt: number;
}

/** Waits for change `id` to be seen in the page (and its frame to start); undefined on timeout. */
export async function seenChange(page: Page, id: string, timeoutMs: number): Promise<SeenChange | undefined> {
  try {
    const handle = await page.waitForFunction(
      (id) => {
        const w = window as unknown as ProbeWindow;
        const r = w.guiBench?.change?.results[id];
        return r?.frameAt !== undefined ? { ...r, eventAt: w.guiBenchMessages?.seen[id] } : undefined;
      },
      id,
      { timeout: timeoutMs, polling: 50 },
    );
    return (await handle.jsonValue()) as SeenChange;
  } catch {
    await page.evaluate(() => {
      const w = window as unknown as ProbeWindow;
      if (w.guiBench?.change) w.guiBench.change.expect = undefined;
      if (w.guiBenchMessages) w.guiBenchMessages.expect = undefined;
    });
    return undefined;
  }
}

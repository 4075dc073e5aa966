// fixtures.mjs — the console-error fixture of page.spec.mjs, shared by the sharing/embedding specs
// (csp, share, embed): every test fails on a page error or a console error/warning (a CSP
// violation, a 404, Emscripten's MIME-type fallback), in the page and in its iframes. Also the
// longer waits (BOOT_MS, RUN_MS), the stepper opened in a language (openStepper), the stepper
// specs' readers of the tables, and the wait for a page's network to go quiet (watchNetwork).
import { test as base, expect } from '@playwright/test';

export const test = base.extend({
  // console messages a spec expects from a page that is not the project's (test.use({ignoreProblems:
  // [regexp]})): the notebook spec's nbconvert page names Debian's file:/// scripts
  ignoreProblems: [[], { option: true }],
  page: async ({ page, ignoreProblems }, use) => {
    const problems = [];
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warning') problems.push(`console.${m.type()}: ${m.text()} (${m.location().url})`);
    });
    await use(page);
    // a test that routes requests (csp, gpt-module) may end while some are in flight (a page still
    // loading on a slow machine): their handlers must not fail the next test
    await page.unrouteAll({ behavior: 'ignoreErrors' });
    expect(problems.filter((p) => !ignoreProblems.some((re) => re.test(p)))).toEqual([]);
  },
});
export { expect };

/**
 * How long a test waits for a page to boot (its wasm module loaded and compiled, its first
 * answer) and for a training run in the worker to reach a state (trained, done, diverged). These
 * bound a wait on a state, never a duration that is asserted: a loaded machine may take many
 * times longer than an idle one, and the test must still pass.
 */
export const BOOT_MS = 120_000;
export const RUN_MS = 480_000;

/** Opens the stepper in `lang` ('en', 'zh': the language it remembers) at `hash`, and waits for its first trace. */
export async function openStepper(page, lang = 'en', hash = '') {
  await page.addInitScript((l) => localStorage.setItem('attention-playground.lang', l), lang);
  await page.goto(`/${hash}`);
  await expect(page.locator('#app')).toHaveAttribute('data-status', 'ready', { timeout: BOOT_MS });
}

/** The number cells of a stepper panel ('weights', 'scores', …) inside `scope`, row by row. */
export const panelCells = (scope, panel) => scope.locator(`figure[data-panel="${panel}"] table tbody tr td[data-c]`);

/**
 * Waits until the tables' text has caught up with the canvas (panels.js writes it right after the
 * frame that shows the painted numbers, far panels' in idle time): two frames, a task, then the
 * rest at once (flushPending, what a selection or a copy does). Needed only before reads that do
 * not retry (allTextContents, evaluate); expect(…).toHaveText retries by itself.
 */
export async function settled(scope) {
  const page = scope.page ? scope.page() : scope;
  await page.evaluate(async () => {
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(r, 0))));
    // panels far off screen get their text in idle time: bring it up to date, as a copy does
    (await import('/stepper/text-queue.js')).flushPending();
  });
}

/** The text of every number cell of a panel, as rows. */
export async function panelText(scope, panel) {
  await settled(scope);
  const rows = scope.locator(`figure[data-panel="${panel}"] table tbody tr`);
  const n = await rows.count();
  const out = [];
  for (let i = 0; i < n; i++) out.push(await rows.nth(i).locator('td[data-c]').allTextContents());
  return out;
}

/**
 * The explanation box as text: its title, then each line (the MathML lines by their data-text,
 * the notes by their text), one per line.
 */
export function explainText(scope) {
  return scope.locator('.aps-explain').first().evaluate((box) => [
    box.querySelector('.aps-explain-title')?.textContent ?? '',
    ...[...box.querySelectorAll('[data-text]')].map((d) => d.dataset.text),
    ...[...box.querySelectorAll('.aps-explain-hint')].map((d) => d.textContent),
  ].join('\n'));
}

/**
 * The page's network, watched by the test itself, for "everything the page asked for has come":
 * `const net = watchNetwork(page)` before the page is opened, then `await net.quiet()`. Quiet is
 * nothing in flight (in the page, its iframes and its workers) and no request started for
 * `quietMs`, seen by two looks in a row.
 *
 * Not page.waitForLoadState('networkidle'): Playwright calls it discouraged, and its bookkeeping
 * can lose the idle state for good when a request starts and ends before the document's
 * DOMContentLoaded (a window that a busy machine widens): CI saw a 10-minute hang there twice.
 * This one fails after `timeout` instead, naming the requests still open.
 */
export function watchNetwork(page, { quietMs = 500 } = {}) {
  const open = new Map();
  let last = Date.now();
  page.on('request', (r) => { open.set(r, r.url()); last = Date.now(); });
  const done = (r) => { open.delete(r); last = Date.now(); };
  page.on('requestfinished', done);
  page.on('requestfailed', done);
  return {
    open: () => [...open.values()],
    async quiet({ timeout = BOOT_MS } = {}) {
      let looks = 0;
      await expect.poll(() => {
        looks = open.size === 0 && Date.now() - last >= quietMs ? looks + 1 : 0;
        return looks >= 2;
      }, {
        intervals: [100],
        timeout,
      }).toBe(true).catch((e) => {
        throw new Error(`the network never went quiet; requests still open: ${[...open.values()].join(', ') || 'none (requests kept starting)'}\n${e.message}`);
      });
    },
  };
}

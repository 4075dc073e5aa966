// a11y-helpers.mjs — what the accessibility specs share: axe-core (@axe-core/playwright) run with
// the WCAG 2.0/2.1/2.2 A and AA rules, every violation a soft failure naming the state, the rule
// and the element; and the small readers the keyboard and view specs use (the focused element and
// whether its focus indicator shows). Limits: axe judges the DOM it sees (not a canvas's pixels).
import AxeBuilder from '@axe-core/playwright';
import { expect, BOOT_MS, RUN_MS } from './fixtures.mjs';

/** The WCAG 2.0, 2.1 and 2.2 rules of levels A and AA (axe's tags). */
export const WCAG_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'];

/**
 * Runs axe on the page (its iframes too) with the WCAG 2.2 A/AA rules and records every violation
 * as a soft failure (all states of a test are reported in one run): the rule, the element (a CSS
 * path) and axe's summary of what is wrong. `state` names the state in the message; `off` lists
 * rules turned off for it (none today: a spec that turns one off says why beside the call).
 */
export async function noViolations(page, state, off = []) {
  const { violations } = await new AxeBuilder({ page }).withTags(WCAG_TAGS).disableRules(off).analyze();
  const found = violations.flatMap((v) => v.nodes.map((n) => `${v.id} [${v.impact}] ${n.target.join(' ')}: ${n.failureSummary.replace(/\s+/g, ' ')}`));
  expect.soft(found, `axe (WCAG 2.2 A/AA) on ${state}`).toEqual([]);
}

/**
 * The focused element (through open shadow roots) as {tag, id, key (data-key), cls, name, outline, inBody}: `outline`
 * says whether a focus indicator is drawn (an outline of some width and style, or a box-shadow),
 * on the file input's label for a hidden file input; `inBody` false when the focus is lost to <body> or nowhere.
 */
export function focused(page) {
  return page.evaluate(() => {
    let a = document.activeElement;
    while (a?.shadowRoot?.activeElement) a = a.shadowRoot.activeElement;
    if (!a || a === document.body || a === document.documentElement) return { inBody: false };
    // a visually hidden file input shows its focus on its label (the button a person sees)
    const shown = a.type === 'file' && a.labels?.length ? a.labels[0] : a;
    const s = getComputedStyle(shown);
    const outline = (s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) > 0) || (s.boxShadow && s.boxShadow !== 'none');
    return { inBody: true, tag: a.tagName.toLowerCase(), id: a.id, key: a.dataset?.key ?? '', cls: String(a.className), name: a.getAttribute('aria-label') || a.textContent.trim().slice(0, 40), outline };
  });
}

/** Asserts the focus is on an element (not lost to body) with a visible focus indicator; `what` names the moment. */
export async function focusVisible(page, what) {
  const f = await focused(page);
  expect(f.inBody, `focus lost to <body> after ${what}`).toBe(true);
  expect(f.outline, `no visible focus indicator on <${f.tag} id="${f.id}"> "${f.name}" after ${what}`).toBe(true);
  return f;
}

// The stepper in large mode: 40 tokens of 4 dimensions, two heads, causal, identity weights (its
// heat maps stand for the tables); returns once the page shows it.
export async function largeMode(page) {
  await page.evaluate(() => {
    const s = window.attentionStepper.getState();
    const I4 = '1 0 0 0\n0 1 0 0\n0 0 1 0\n0 0 0 1';
    const x = Array.from({ length: 40 }, (_, i) => Array.from({ length: 4 }, (_, j) => (Math.round(Math.sin(i * 3 + j) * 90) / 100).toString()).join(' ')).join('\n');
    window.attentionStepper.setState({ ...s, preset: 'custom', matrices: { ...s.matrices, x, W_q: I4, W_k: I4, W_v: I4, W_o: I4 }, options: { ...s.options, causal: true, n_head: 2 } });
  });
  await expect(page.locator('.aps-large')).toBeVisible();
}

/** A short seeded run of the training page: small, the same every time. */
export const RUN = '#steps=24&batch_size=4&eval_interval=8&sample_every=0&seed=3';

/** Trains RUN, then shows the maps, the walk of a position, the next-token bars and generation's KV view. */
export async function afterRun(page, hash = RUN) {
  await walkAfterRun(page, hash);
  await expect(page.locator('#app')).toHaveAttribute('data-next', 'ready', { timeout: RUN_MS });
  await page.locator('#tr-gen-start').click();
  await expect(page.locator('#tr-kv')).not.toBeEmpty({ timeout: RUN_MS });
}

/**
 * The training page after a run of `hash` with the maps painted and a position walked (afterRun
 * without generation); `beforeRun(page)`, if given, is awaited once the page is ready, before Start.
 */
export async function walkAfterRun(page, hash = RUN, beforeRun = async () => {}) {
  await page.goto(`/train/${hash}`);
  await expect(page.locator('#app')).toHaveAttribute('data-status', 'ready', { timeout: BOOT_MS });
  await beforeRun(page);
  await page.locator('#tr-start').click();
  await expect(page.locator('#app')).toHaveAttribute('data-train', /done|diverged/, { timeout: RUN_MS });
  await page.locator('#tr-maps').click();
  await expect(page.locator('#tr-maps-box')).toHaveAttribute('data-painted', /^[1-9]/, { timeout: RUN_MS });
  await expect(page.locator('#tr-walk-position option')).not.toHaveCount(0, { timeout: RUN_MS });
  await page.locator('#tr-walk-go').click();
  await expect(page.locator('#tr-walk-status')).toContainText(/^(Position \d+ |位置 \d+（)/, { timeout: RUN_MS });
}

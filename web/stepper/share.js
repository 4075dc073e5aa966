// share.js — the "Share and export" toolbar of a stepper: copy a link to the exact state, and export
// any matrix of the current trace as CSV, JSON, NumPy, LaTeX, SVG or PNG.
//
// It plugs into a mounted stepper from the outside, through its controller only
// ({getState, on('change'|'trace', fn)}), so it works the same on the playground page, in
// <attention-stepper> and in the iframe embed:
//
//   import { attachShareTools } from './stepper/share.js';
//   const tools = attachShareTools(toolbarSlot, controller, { link: () => permalink.url() });
//
// The toolbar is placed in the element you give (it is appended there); styles in share.css.
import { el, setDisabled, ensureStylesheet } from '../common/ui.js';
import { FORMATS, exportMatrix, matrixToText, heatColor } from './export.js';
import { copyText, bindPermalink } from '../common/permalink.js';
import { validateState, MLA_KEYS } from '../common/state.js';
import { tileMatrices } from './variants-tiles.js';

const TEXT = {
  en: {
    toolbar: 'Share and export',
    copyLink: 'Copy link',
    copied: 'Link copied',
    copyFailed: 'Copy failed: the link is in the address bar',
    open: 'Open in the playground',
    export: 'Export',
    matrix: 'Matrix to export',
    formatTitle: (f, m) => `Download ${m} as ${f}`,
    copyAs: 'Copy as',
    copiedAs: (f) => `${f} copied`,
    head: (h) => `head ${h}`,
    noTrace: 'nothing to export yet',
  },
  zh: {
    toolbar: '分享与导出',
    copyLink: '复制链接',
    copied: '链接已复制',
    copyFailed: '复制失败：链接在地址栏中',
    open: '在演练场中打开',
    export: '导出',
    matrix: '要导出的矩阵',
    formatTitle: (f, m) => `将 ${m} 下载为 ${f}`,
    copyAs: '复制为',
    copiedAs: (f) => `已复制 ${f}`,
    head: (h) => `第 ${h} 个头`,
    noTrace: '还没有可导出的内容',
  },
};

/** Names of the per-head matrices, in the order of the computation. */
const HEAD_KEYS = ['q', 'k', 'v', 'q_rot', 'k_rot', 'scores', 'scaled', 'bias', 'masked', 'weights', 'context',
  'q_latent', 'scores_absorbed', 'flash_m', 'flash_alpha', 'flash_l', 'flash_context'];
const INPUT_KEYS = ['x', 'W_q', 'W_k', 'W_v', 'b_q', 'b_k', 'b_v', 'W_o', 'b_o', 'Q', 'K', 'V', ...MLA_KEYS];

/**
 * Every matrix of a trace, as [{id, name, label, matrix, heat}]: inputs, mask (and RoPE's angles), each head's steps,
 * concat and out. id is stable ('inputs.x', 'heads.1.weights', 'out'); name is a file name stem.
 * @param {object} trace the object web/attention.js returns
 */
export function traceMatrices(trace, lang = 'en') {
  const T = TEXT[lang] ?? TEXT.en;
  const list = [];
  if (!trace || !Array.isArray(trace.heads)) return list;
  for (const k of INPUT_KEYS) {
    const m = trace.inputs?.[k];
    // a bias is a flat vector: exported as one row
    if (m !== undefined) list.push({ id: `inputs.${k}`, name: k, label: k, matrix: Array.isArray(m[0]) ? m : [m] });
  }
  if (trace.mask) list.push({ id: 'mask', name: 'mask', label: 'mask', matrix: trace.mask });
  // RoPE's angles (position × pair), when on; the rotated q and k and ALiBi's bias are per head
  if (trace.rope) list.push({ id: 'rope_angles', name: 'rope_angles', label: 'rope_angles', matrix: trace.rope.k_angles });
  if (trace.mla) list.push({ id: 'latent', name: 'latent', label: 'latent', matrix: trace.mla.c, panel: 'latent' });
  const many = trace.heads.length > 1;
  trace.heads.forEach((h0, i) => {
    // the variants' per-head panels: FlashAttention's tiles (m, α, ℓ per key block; o / ℓ) and the absorbed form
    const tiles = trace.flash ? tileMatrices(trace.flash, i, trace.T) : null;
    const h = { ...h0,
      ...(tiles ? { flash_m: tiles.m, flash_alpha: tiles.alpha, flash_l: tiles.l, flash_context: trace.flash.heads[i].context } : {}),
      ...(trace.mla ? { q_latent: trace.mla.heads[i].q_latent, scores_absorbed: trace.mla.heads[i].scores_absorbed } : {}) };
    for (const k of HEAD_KEYS) {
      if (!h[k]) continue;
      list.push({
        id: `heads.${i}.${k}`,
        name: many ? `head${i + 1}_${k}` : k,
        label: many ? `${T.head(i + 1)} · ${k}` : k,
        matrix: h[k],
        heat: k === 'weights',
        head: i,
        panel: k,
      });
    }
  });
  if (trace.concat) list.push({ id: 'concat', name: 'concat', label: 'concat', matrix: trace.concat, panel: 'concat' });
  if (trace.out) list.push({ id: 'out', name: 'out', label: 'out', matrix: trace.out, panel: 'out' });
  return list;
}

/** The toolbar's stylesheet, share.css next to this module. */
export const SHARE_CSS = new URL('./share.css', import.meta.url).href;

/** The trace in a 'trace' event's payload: the trace itself, or {trace, …}. */
export function traceOf(payload) {
  if (payload && Array.isArray(payload.heads)) return payload;
  if (payload && payload.trace && Array.isArray(payload.trace.heads)) return payload.trace;
  return null;
}

/**
 * Adds the toolbar to `slot` and keeps it in step with the controller.
 * @param {HTMLElement} slot where the toolbar goes (appended)
 * @param {{getState(): object, on(ev: string, fn: Function): any}} controller
 * @param {object} [options]
 * @param {() => string} [options.link]   the URL to copy (default: none, no copy button)
 * @param {() => string} [options.openHref] a URL for an "Open in the playground" link
 * @param {object} [options.trace]        the trace shown now, if the component already computed one
 * @param {HTMLElement} [options.panelRoot] the stepper's root: SVG/PNG exports take the heatmap
 *   colours of the matrix's panel from there when it is on screen
 * @returns {{element: HTMLElement, setTrace(t: object): void, exportCurrent(f: string): Promise<string>, destroy(): void}}
 */
export function attachShareTools(slot, controller, { link, openHref, trace = null, panelRoot = null } = {}) {
  ensureStylesheet(SHARE_CSS, slot);
  const bar = el('div', 'apx-share');
  bar.setAttribute('role', 'toolbar');
  let lang = langOf(controller);
  let T = TEXT[lang] ?? TEXT.en;
  let current = traceOf(trace);
  let entries = [];

  const copyBtn = link ? el('button', 'apx-btn apx-copy-link', T.copyLink) : null;
  const openA = openHref ? el('a', 'apx-open', T.open) : null;
  const status = el('span', 'apx-status');
  status.setAttribute('role', 'status');
  status.setAttribute('aria-live', 'polite');
  const exportGroup = el('span', 'apx-export');
  const exportLabel = el('label', 'apx-label', T.export);
  const select = el('select', 'apx-matrix');
  select.name = 'export-matrix';
  const selectId = `apx-m-${Math.random().toString(36).slice(2, 9)}`;
  select.id = selectId;
  exportLabel.htmlFor = selectId;
  const formatBtns = Object.entries(FORMATS).map(([f, info]) => {
    const b = el('button', 'apx-btn apx-format', info.label);
    b.type = 'button';
    b.dataset.format = f;
    b.addEventListener('click', () => run(() => exportCurrent(f)));
    return b;
  });
  exportGroup.append(exportLabel, select, ...formatBtns);
  if (copyBtn) {
    copyBtn.type = 'button';
    copyBtn.dataset.action = 'copy-link';
    copyBtn.addEventListener('click', () => run(async () => {
      const ok = await copyText(link());
      say(ok ? T.copied : T.copyFailed);
    }));
  }
  if (openA) {
    openA.target = '_blank';
    openA.rel = 'noopener';
    openA.href = openHref();
    openA.addEventListener('focus', () => { openA.href = openHref(); });
    openA.addEventListener('pointerdown', () => { openA.href = openHref(); });
  }
  bar.append(...[copyBtn, openA, exportGroup, status].filter(Boolean));
  slot.append(bar);

  let sayTimer = 0;
  function say(text) {
    status.textContent = text;
    clearTimeout(sayTimer);
    sayTimer = setTimeout(() => { status.textContent = ''; }, 4000);
  }
  async function run(fn) {
    try {
      await fn();
    } catch (e) {
      say(String(e?.message ?? e));
    }
  }

  function relabel() {
    bar.setAttribute('aria-label', T.toolbar);
    if (copyBtn) copyBtn.textContent = T.copyLink;
    if (openA) openA.textContent = T.open;
    exportLabel.textContent = T.export;
    select.setAttribute('aria-label', T.matrix);
  }

  let optionsKey = null;
  function fill() {
    const keep = select.value;
    entries = traceMatrices(current, lang);
    // an unsolved exercise: only the inputs can be exported (the steps would give the answers)
    if (controller.exerciseOpen?.()) entries = entries.filter((e) => e.id.startsWith('inputs.'));
    // rebuild the options only when the list changed (not on every edit of a number)
    const key = entries.map((e) => `${e.id}\u0001${e.label}`).join('\u0002');
    if (key !== optionsKey || select.options.length !== entries.length) {
      select.replaceChildren(...entries.map((e) => new Option(e.label, e.id)));
      optionsKey = key;
    }
    const head = Math.min(Number(controller.getState?.()?.head) || 0, (current?.heads?.length ?? 1) - 1);
    const dflt = entries.find((e) => e.id === `heads.${head}.weights`) ?? entries[0];
    if (entries.some((e) => e.id === keep)) select.value = keep;
    else if (dflt) select.value = dflt.id;
    const none = entries.length === 0;
    select.disabled = none;
    for (const b of formatBtns) {
      setDisabled(b, none);
      const title = none ? T.noTrace : T.formatTitle(FORMATS[b.dataset.format].label, select.value);
      if (b.title !== title) b.title = title;
    }
  }

  /** The entry of the selected matrix, with its panel colours read from the page when shown. */
  function selected() {
    return entries.find((e) => e.id === select.value) ?? null;
  }

  async function exportCurrent(format) {
    const e = selected();
    if (!e) throw new Error(T.noTrace);
    const shape = `${e.matrix.length} × ${Array.isArray(e.matrix[0]) ? e.matrix[0].length : 1}`;
    const colors = panelColors(panelRoot, e, controller) ?? (e.panel ? (e.heat ? 'heat' : rangeColors(e.matrix)) : null);
    return exportMatrix(e.name, e.matrix, format, { title: e.label, subtitle: shape, colors });
  }

  const onTrace = (payload) => {
    const t = traceOf(payload);
    current = t; // a failed trace (bad input) leaves nothing to export
    fill();
  };
  const onChange = () => {
    const l = langOf(controller);
    if (l !== lang) {
      lang = l;
      T = TEXT[lang] ?? TEXT.en;
      relabel();
      fill();
    }
  };
  const offs = [controller.on('trace', onTrace), controller.on('change', onChange)];
  try { offs.push(controller.on('exercise', () => fill())); } catch { /* a controller without exercises */ }
  relabel();
  fill();

  return {
    element: bar,
    setTrace(t) { onTrace(t); },
    exportCurrent,
    /** The selected matrix as text (for tests and "copy as"). */
    text(format) {
      const e = selected();
      return e ? matrixToText(e.matrix, format, { name: e.name }) : '';
    },
    destroy() {
      for (const off of offs) if (typeof off === 'function') off();
      clearTimeout(sayTimer);
      bar.remove();
    },
  };
}

/**
 * The background colours of a matrix's panel as the page paints it (its heatmap), or null when the
 * panel is not on screen with this matrix (another head shown, a stale trace, no such panel).
 */
export function panelColors(panelRoot, entry, controller) {
  if (!panelRoot || !entry?.panel) return null;
  if (entry.head !== undefined) {
    let head = 0;
    try { head = controller.getState().head ?? 0; } catch { /* keep 0 */ }
    if (head !== entry.head) return null;
  }
  const fig = panelRoot.querySelector(`figure[data-panel="${entry.panel}"]`);
  if (!fig) return null;
  const m = entry.matrix;
  // a panel painted on a canvas (panels.js) says which colours it painted
  const view = fig.querySelector('.aps-mat-scroll')?.apsView;
  if (view?.fillColors) {
    const c = view.fillColors();
    return c && c.length === m.length && c[0]?.length === m[0]?.length ? c : null;
  }
  const colors = [];
  for (let i = 0; i < m.length; i++) {
    const row = [];
    for (let j = 0; j < m[i].length; j++) {
      const td = fig.querySelector(`td[data-r="${i}"][data-c="${j}"]`);
      if (!td) return null;
      row.push(getComputedStyle(td).backgroundColor || null);
    }
    colors.push(row);
  }
  return colors;
}

/** A sequential heatmap over the matrix's own finite range (when the panel is not on screen). */
export function rangeColors(m) {
  let lo = Infinity;
  let hi = -Infinity;
  for (const row of m) for (const v of row) if (Number.isFinite(v)) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
  return (v) => {
    if (!Number.isFinite(v)) return null;
    const x = hi > lo ? (v - lo) / (hi - lo) : hi > 0 ? 1 : 0;
    return heatColor(x);
  };
}

function langOf(controller) {
  try {
    return controller.getState().lang === 'zh' ? 'zh' : 'en';
  } catch {
    return 'en';
  }
}

const enabled = new WeakMap();

/**
 * Keeps `slot` at the end of the component's toolbar (.aps-toolbar inside `root`): the component
 * rebuilds its DOM on some changes (language, mode, preset), so the slot is put back each time
 * (a MutationObserver on root's direct children only). Without a toolbar, the slot goes just
 * before root. Returns a function that stops it.
 */
export function keepInToolbar(slot, root) {
  slot.classList.add('apx-slot');
  const place = () => {
    const bar = root.querySelector('.aps-toolbar');
    if (bar) {
      if (slot.parentElement !== bar) bar.append(slot);
    } else if (!slot.isConnected) {
      root.before(slot);
    }
  };
  place();
  const mo = new MutationObserver(place);
  mo.observe(root, { childList: true });
  return () => mo.disconnect();
}

/**
 * Sharing for a page that owns the URL (the playground, embed.html), in one call after mounting:
 * the state follows the URL hash (restored from it now, written on every change), and the
 * share/export toolbar goes into the component's own toolbar (.aps-toolbar), put back there
 * whenever the component re-renders. Idempotent per controller.
 *
 *   const stepper = await mountStepper(app, {});
 *   enableSharing(stepper, app);
 *
 * @param {{getState, setState, on}} controller
 * @param {HTMLElement} root the element the stepper was mounted in
 * @param {{link?: () => string}} [options] link: the URL to copy (default: this page with the state)
 * @returns {{permalink: ReturnType<typeof bindPermalink>, tools: ReturnType<typeof attachShareTools>, destroy(): void}}
 */
export function enableSharing(controller, root, { link } = {}) {
  if (enabled.has(controller)) return enabled.get(controller);
  let permalink = null;
  const slot = document.createElement('div');
  slot.className = 'apx-slot';
  // the toolbar listens first, so it gets the trace of a state restored from the hash
  const tools = attachShareTools(slot, controller, { link: link ?? (() => permalink.url()), panelRoot: root });
  permalink = bindPermalink(controller, { validate: validateState });
  const unplace = keepInToolbar(slot, root);
  if (!permalink.restored) controller.setState(controller.getState()); // a trace for the toolbar
  const api = {
    permalink,
    tools,
    destroy() {
      unplace();
      tools.destroy();
      permalink.destroy();
      slot.remove();
      enabled.delete(controller);
    },
  };
  enabled.set(controller, api);
  return api;
}

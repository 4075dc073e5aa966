// ui.js — the small DOM helpers both pages share (the stepper, web/stepper/, and the training
// page, web/train/): making an element, showing and hiding one, a status line, a card, the
// segmented radio group, the language switch, offering a file as a download, and a stylesheet
// linked once into a document or shadow root. One behaviour for each, accessible the same way
// on both pages.
//
// Limits: plain DOM, no state of its own. Every helper takes what it needs as arguments (the
// current value, the label, a callback); none reads a page's state or translator. Browser only.

/**
 * A new element with a class and text.
 * @param {string} tag
 * @param {string} [cls] class name(s); empty or omitted for none
 * @param {string} [text] text content; omitted for none
 * @returns {HTMLElement}
 */
export function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

/** Shows or hides an element, writing the attribute only when it changes. */
/** How a script scrolls: 'smooth', or 'auto' (a jump) when the reader asks for reduced motion. */
export function scrollBehavior() {
  return globalThis.matchMedia?.('(prefers-reduced-motion: reduce)').matches ? 'auto' : 'smooth';
}

/**
 * Keeps the focus from hiding under a sticky or fixed box (WCAG 2.4.11): a frame after each focus
 * move inside `root`, when one of `overlays()` (sticky or fixed at that moment, shown, not holding
 * the focus) covers part of the focused element, the window scrolls it clear of the box (never
 * its top above the window's). A focus a press gives (the mouse's, a touch's) waits for the
 * release: scrolled between the two, a button partly under the box moved from under the pointer
 * and the click was lost. Returns the function that unhooks it. Limits: the window is the
 * scroller; a box over the focus inside another scroller is its page's to avoid.
 */
export function keepFocusClear(root, overlays) {
  const clear = () => {
    let e = document.activeElement;
    while (e?.shadowRoot?.activeElement) e = e.shadowRoot.activeElement;
    if (!e || !(root.contains(e) || root.shadowRoot?.contains(e))) return;
    const r = e.getBoundingClientRect();
    for (const o of overlays()) {
      if (!o || o.contains(e) || !o.getClientRects().length) continue;
      const pos = getComputedStyle(o).position;
      if (pos !== 'sticky' && pos !== 'fixed') continue;
      const b = o.getBoundingClientRect();
      if (r.right <= b.left || r.left >= b.right || r.bottom <= b.top || r.top >= b.bottom) continue;
      const below = b.top + b.height / 2 > innerHeight / 2; // a box at the window's bottom: scroll the page up under it
      const dy = below ? Math.min(r.bottom - b.top + 8, r.top - 8) : r.top - b.bottom - 8;
      if (dy) window.scrollBy({ top: dy, behavior: 'instant' });
      return;
    }
  };
  let frame = 0;
  // a press focuses its element in the task that dispatches mousedown (touch's too), so a focus
  // seen before that task ends came from a press; its clearing waits for the mouseup (the click
  // is dispatched with it, before the frame)
  let pressing = false;
  let held = false;
  const later = () => { cancelAnimationFrame(frame); frame = requestAnimationFrame(clear); };
  const onPress = () => { pressing = true; setTimeout(() => { pressing = false; }); };
  const onFocus = () => {
    held = pressing;
    if (held) cancelAnimationFrame(frame); else later();
  };
  const onRelease = () => { if (held) { held = false; later(); } };
  root.addEventListener('mousedown', onPress, true);
  root.addEventListener('focusin', onFocus);
  addEventListener('mouseup', onRelease, true);
  return () => {
    cancelAnimationFrame(frame);
    root.removeEventListener('mousedown', onPress, true);
    root.removeEventListener('focusin', onFocus);
    removeEventListener('mouseup', onRelease, true);
  };
}

export function hide(e, hidden) {
  if (e.hidden !== hidden) e.hidden = hidden;
}

/** Sets an element's text, writing it only when it changes (no needless layout). */
export function setText(e, text) {
  if (e.textContent !== text) e.textContent = text;
}

/** Sets a data attribute, writing it only when it changes. */
export function setData(e, key, value) {
  if (e.dataset[key] !== value) e.dataset[key] = value;
}

/** Enables or disables a control, writing the attribute only when it changes. */
export function setDisabled(e, disabled) {
  if (e.disabled !== disabled) e.disabled = disabled;
}

/**
 * A status line: a paragraph with role="status" (announced politely by screen readers).
 * @param {string} id the element's id
 * @param {string} [cls] default 'tr-status'
 */
export function statusLine(id, cls = 'tr-status') {
  const p = el('p', cls);
  p.id = id;
  p.setAttribute('role', 'status');
  return p;
}

/**
 * A card: a <section> labelled by its <h2>, with an optional lede under the heading.
 * @param {{id: string, cls?: string, title: string, headingId: string, lede?: string}} o
 *   cls: the section's classes (default 'tr-card')
 * @returns {HTMLElement} the section; append the card's body to it
 */
export function card({ id, cls = 'tr-card', title, headingId, lede }) {
  const s = el('section', cls);
  s.id = id;
  s.setAttribute('aria-labelledby', headingId);
  const h = el('h2', 'aps-h2', title);
  h.id = headingId;
  s.append(h);
  if (lede) s.append(el('p', 'tr-lede', lede));
  return s;
}

/**
 * A radio group of buttons (role="radiogroup"): one is checked; a click or an arrow key picks.
 * Picking updates aria-checked and the roving tabindex here, then calls onPick(value) (which may
 * also re-render: the group is consistent either way).
 * @param {object} o
 * @param {string} o.label the group's accessible name
 * @param {string} o.key a name for the group: buttons get data-key="KEY.VALUE"
 * @param {Array<[string, string]>} o.items [value, text] pairs
 * @param {string} o.value the checked value
 * @param {(value: string) => void} o.onPick
 * @param {string} [o.idPrefix] when given, the group gets id PREFIX+KEY and each button PREFIX+KEY-VALUE
 * @param {string} [o.cls] extra class of the group
 */
export function segGroup({ label, key, items, value, onPick, idPrefix, cls }) {
  const g = el('div', cls ? `aps-segs ${cls}` : 'aps-segs');
  g.setAttribute('role', 'radiogroup');
  g.setAttribute('aria-label', label);
  if (idPrefix !== undefined) g.id = `${idPrefix}${key}`;
  const buttons = items.map(([v, text]) => {
    const b = el('button', 'aps-seg', text);
    b.type = 'button';
    b.setAttribute('role', 'radio');
    b.setAttribute('aria-checked', String(v === value));
    b.tabIndex = v === value ? 0 : -1;
    b.dataset.key = `${key}.${v}`;
    b.dataset.value = v;
    if (idPrefix !== undefined) b.id = `${idPrefix}${key}-${v}`;
    b.addEventListener('click', () => {
      for (const x of buttons) {
        const on = x === b;
        x.setAttribute('aria-checked', String(on));
        x.tabIndex = on ? 0 : -1;
      }
      onPick(v);
    });
    g.append(b);
    return b;
  });
  g.addEventListener('keydown', (e) => {
    const k = e.key;
    if (!['ArrowLeft', 'ArrowRight', 'ArrowUp', 'ArrowDown'].includes(k)) return;
    e.preventDefault();
    e.stopPropagation();
    const i = buttons.indexOf(g.ownerDocument.activeElement);
    const n = buttons[(i + (k === 'ArrowLeft' || k === 'ArrowUp' ? -1 : 1) + buttons.length) % buttons.length];
    n.focus();
    n.click();
  });
  return g;
}

/** The interface languages: [code, its own name, the HTML lang of that name]. */
export const LANGS = [['en', 'English', 'en'], ['zh', '中文', 'zh-CN']];

/**
 * The language switch: a group of toggle buttons (aria-pressed), one per language, each named
 * in its own language. onPick(code) is called for a language other than the current one.
 * @param {object} o
 * @param {string} o.lang the current language code
 * @param {string} o.label the group's accessible name
 * @param {(code: string) => void} o.onPick
 * @param {string} [o.idPrefix] when given, each button gets id PREFIX+CODE
 */
export function langSwitch({ lang, label, onPick, idPrefix }) {
  const g = el('div', 'aps-lang');
  g.setAttribute('role', 'group');
  g.setAttribute('aria-label', label);
  for (const [code, name, htmlLang] of LANGS) {
    const b = el('button', 'aps-seg', name);
    b.type = 'button';
    b.lang = htmlLang;
    b.dataset.key = `lang.${code}`;
    if (idPrefix !== undefined) b.id = `${idPrefix}${code}`;
    b.setAttribute('aria-pressed', String(lang === code));
    b.addEventListener('click', () => { if (code !== lang) onPick(code); });
    g.append(b);
  }
  return g;
}

/**
 * Offers a Blob as a download named `name`: a temporary <a download> on an object URL.
 * @param {string} name
 * @param {Blob} blob
 */
export function downloadBlob(name, blob) {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.rel = 'noopener';
  a.hidden = true;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 30_000);
}

/**
 * Offers text as a download.
 * @param {string} name file name, e.g. "weights.csv"
 * @param {string} text
 * @param {string} [mime] default text/plain
 */
export function downloadText(name, text, mime = 'text/plain') {
  downloadBlob(name, new Blob([text], { type: `${mime};charset=utf-8` }));
}

/**
 * Adds <link rel="stylesheet" href="…"> to the document head (or to the shadow root `node` lives in)
 * unless it is there already. A stylesheet from the same origin is allowed by style-src 'self'.
 * @returns {Promise<void>} resolves when it has loaded (or failed)
 */
export function ensureStylesheet(href, node = document) {
  const root = node.getRootNode ? node.getRootNode() : document;
  const parent = root instanceof ShadowRoot ? root : document.head;
  const have = [...parent.querySelectorAll('link[rel="stylesheet"]')].find((l) => l.href === href);
  if (have) return have.__apxLoaded ?? Promise.resolve();
  const link = document.createElement('link');
  link.rel = 'stylesheet';
  link.href = href;
  link.__apxLoaded = new Promise((resolve) => {
    link.addEventListener('load', () => resolve(), { once: true });
    link.addEventListener('error', () => resolve(), { once: true });
  });
  parent.append(link);
  return link.__apxLoaded;
}

// permalink.js — the stepper's state in the URL hash, so a link restores exactly what was on screen.
//
// Format:  #s=1.<base64url of the UTF-8 JSON of the state>
//   - "1." is the format version (it matches state.version 1); an unknown version decodes to null.
//   - base64url (RFC 4648 §5, no padding) uses only A–Z a–z 0–9 - _, so the hash needs no escaping.
//   - The whole state is kept, including the text the user typed even when it does not parse:
//     the link restores the screen, errors and all.
// decodeState never throws: anything it cannot read (junk, truncated links, a wrong version, a
// state that fails validation) gives null, and the caller falls back to the default state.
//
//   import { encodeState, decodeState, bindPermalink } from './permalink.js';
//   location.hash = encodeState(state);            // '#s=1.eyJ2ZXJzaW9uIjox…'
//   decodeState(location.hash)                      // the state, or null
//   const link = bindPermalink(controller);         // hash ⇄ state (written once edits pause);
//                                                   // link.copy() copies the URL

export const HASH_KEY = 's';
export const FORMAT_VERSION = 1;
/** Links longer than this are refused on decode (a state is a few kB; 16×16 matrices ≈ 8 kB). */
export const MAX_HASH_LENGTH = 2_000_000;

function bytesToBase64url(bytes) {
  let bin = '';
  const CHUNK = 0x8000;
  for (let i = 0; i < bytes.length; i += CHUNK) bin += String.fromCharCode.apply(null, bytes.subarray(i, i + CHUNK));
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function base64urlToBytes(s) {
  if (!/^[A-Za-z0-9_-]*$/.test(s) || s.length % 4 === 1) return null;
  const b64 = s.replace(/-/g, '+').replace(/_/g, '/') + '==='.slice((s.length + 3) % 4);
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/**
 * The hash fragment for a state: '#s=1.' + base64url(JSON). Only JSON-serialisable fields survive
 * (the state is JSON by contract).
 * @param {object} state
 * @returns {string}
 */
export function encodeState(state) {
  const json = JSON.stringify(state);
  return `#${HASH_KEY}=${FORMAT_VERSION}.${bytesToBase64url(new TextEncoder().encode(json))}`;
}

/** The payload of a hash or URL: 's=1.xxx' out of '#s=1.xxx', 'https://…/#a=b&s=1.xxx', '1.xxx'. */
function payloadOf(text) {
  let s = String(text);
  const hashAt = s.indexOf('#');
  if (hashAt >= 0) s = s.slice(hashAt + 1);
  if (/^\d+\./.test(s)) return s;
  for (const part of s.split('&')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq) === HASH_KEY) return part.slice(eq + 1);
  }
  return null;
}

/**
 * The state in a hash ('#s=1.…'), a URL holding one, or the bare payload ('1.…'); null for anything
 * else. Never throws.
 * @param {string} text
 * @param {{validate?: (obj: object) => any}} [options] validate: the state module's validateState;
 *   a falsy result, a thrown error, {ok:false} or a non-empty array of errors rejects the state; an
 *   object with .state or a state-like object (version present) replaces it.
 * @returns {object|null}
 */
export function decodeState(text, { validate } = {}) {
  try {
    if (typeof text !== 'string' || text.length === 0 || text.length > MAX_HASH_LENGTH) return null;
    let payload = payloadOf(text);
    if (!payload) return null;
    try { payload = decodeURIComponent(payload); } catch { /* keep it as it is */ }
    const dot = payload.indexOf('.');
    if (dot < 1 || payload.slice(0, dot) !== String(FORMAT_VERSION)) return null;
    const bytes = base64urlToBytes(payload.slice(dot + 1).trim());
    if (!bytes) return null;
    const json = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    const obj = JSON.parse(json);
    if (!obj || typeof obj !== 'object' || Array.isArray(obj) || obj.version !== FORMAT_VERSION) return null;
    return validate ? applyValidate(validate, obj) : obj;
  } catch {
    return null;
  }
}

function applyValidate(validate, obj) {
  let r;
  try {
    r = validate(obj);
  } catch {
    return null;
  }
  if (r === true || r === undefined) return obj;
  if (!r) return null;
  if (Array.isArray(r)) return r.length === 0 ? obj : null;
  if (typeof r === 'object') {
    if (r.ok === false || r.valid === false) return null;
    if (Array.isArray(r.errors) && r.errors.length && !r.state) return null;
    if (r.state && typeof r.state === 'object') return r.state;
    if ('version' in r) return r;
    if (r.ok === true || r.valid === true) return obj;
  }
  return null;
}

/**
 * Copies text to the clipboard: navigator.clipboard when it is there and allowed, else a hidden
 * textarea and document.execCommand('copy'). Resolves true when one of them worked.
 * @param {string} text
 * @returns {Promise<boolean>}
 */
export async function copyText(text) {
  try {
    if (globalThis.navigator?.clipboard?.writeText) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch { /* denied or not focused: fall back */ }
  try {
    const ta = document.createElement('textarea');
    ta.value = text;
    ta.setAttribute('readonly', '');
    ta.className = 'apx-offscreen'; // positioned off screen by share.css; no inline style (CSP)
    document.body.append(ta);
    ta.select();
    const ok = document.execCommand('copy');
    ta.remove();
    return ok;
  } catch {
    return false;
  }
}

/** The page URL with the state in its hash. */
export function linkFor(state, base = globalThis.location?.href ?? '') {
  const url = String(base).split('#')[0];
  return url + encodeState(state);
}

/** How long the hash waits after the last change before it is written (ms). */
export const WRITE_DELAY = 150;

/**
 * Binds a stepper controller ({getState, setState, on}) to location.hash: restores the state from
 * the hash now (if there is a valid one), writes the hash with history.replaceState once the
 * changes pause (WRITE_DELAY after the last one; at once when the page is hidden or left), and
 * follows hash changes made by the user (a pasted link, the browser's Back and Forward).
 * replaceState is not written at every keystroke: with a long hash it costs 5–25 ms of the main
 * thread each time, and browsers throttle pages that call it too often. A change the learner made
 * on purpose (the 'change' event's {push}: an example, a random fill, an option) is a new history
 * entry at once (pushState), so Back returns to the state before it; the entry it leaves keeps
 * the state from just before it (keystrokes not yet written included). Back to the entry without a
 * state (the page as first opened) restores the state the page started with.
 * @param {{getState(): object, setState(s: object): void, on(ev: string, fn: Function): any}} controller
 * @param {{validate?: Function, restore?: boolean, suffix?: string}} [options] suffix: kept after
 *   the state in the hash ('&report-to=…': the page's own parameters, which the state does not hold)
 * @returns {{restored: boolean, url(): string, copy(): Promise<boolean>, destroy(): void}}
 */
export function bindPermalink(controller, { validate, restore = true, suffix = '' } = {}) {
  let lastHash = null;
  let restored = false;
  if (restore) {
    const s = decodeState(location.hash, { validate });
    if (s) {
      try {
        controller.setState(s);
        restored = true;
        lastHash = location.hash;
      } catch { /* a state the component refuses: keep its default */ }
    }
  }
  let timer = 0;
  let initial = null; // the state the page started with (Back to the entry without a hash)
  try { initial = controller.getState(); } catch { /* none */ }
  let shown = initial; // the state of the last 'change' (the one before a change that pushes)
  const put = (state, push) => {
    const hash = encodeState(state) + suffix;
    if (hash === location.hash) return;
    lastHash = hash;
    if (push) history.pushState(null, '', hash); else history.replaceState(history.state, '', hash);
  };
  const write = () => {
    clearTimeout(timer);
    timer = 0;
    let state;
    try { state = controller.getState(); } catch { return; }
    put(state, false);
  };
  const onHash = () => {
    if (location.hash === lastHash) return;
    clearTimeout(timer); // a link the user pasted wins over a pending write
    timer = 0;
    const s = location.hash.length > 1 ? decodeState(location.hash, { validate }) : initial;
    if (!s) return;
    lastHash = location.hash;
    try { controller.setState(s); shown = controller.getState(); } catch { /* ignore */ }
  };
  const later = (state, how) => {
    clearTimeout(timer);
    timer = 0;
    if (how?.push && state) {
      if (shown) put(shown, false); // the entry we leave: the state just before (typing not yet written)
      put(state, true);
    } else {
      timer = setTimeout(write, WRITE_DELAY);
    }
    if (state) shown = state;
  };
  const flush = () => { if (timer) write(); };
  const onVisibility = () => { if (document.visibilityState === 'hidden') flush(); };
  const off = controller.on('change', later);
  addEventListener('hashchange', onHash);
  addEventListener('pagehide', flush);
  document.addEventListener('visibilitychange', onVisibility);
  return {
    restored,
    url: () => linkFor(controller.getState()),
    copy: () => copyText(linkFor(controller.getState())),
    /** Writes a pending hash now. */
    flush,
    destroy() {
      flush();
      removeEventListener('hashchange', onHash);
      removeEventListener('pagehide', flush);
      document.removeEventListener('visibilitychange', onVisibility);
      if (typeof off === 'function') off();
    },
  };
}

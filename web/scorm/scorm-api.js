// scorm-api.js — the SCORM 1.2 run-time API as a SCO sees it: finding the LMS's `API` object the
// standard way (up the chain of parents, then the opener's), and a small session over it that
// checks every call's error code. No DOM; the player (player.js) decides what to write.
//
// Limits: SCORM 1.2 only (the `API` object; SCORM 2004's `API_1484_11` is not looked for). A
// parent on another origin cannot be read: the search steps over it and goes on up, as the ADL
// wrapper does, and finds nothing if the LMS's window is cross-origin.

/** How far up the search goes (ADL's wrapper: 7 parents). */
const MAX_DEPTH = 7;

/** The window's own `API`, or null (a cross-origin window throws on any property). */
function apiOf(win) {
  try {
    const api = win.API;
    return api && typeof api.LMSInitialize === 'function' ? api : null;
  } catch {
    return null;
  }
}

/** `win`'s API or its nearest parent's, at most MAX_DEPTH levels up. */
function searchUp(win) {
  for (let depth = 0; win && depth <= MAX_DEPTH; depth++) {
    const api = apiOf(win);
    if (api) return api;
    if (!win.parent || win.parent === win) return null;
    win = win.parent;
  }
  return null;
}

/**
 * The LMS's SCORM 1.2 API for `win`: up its parents, then up its opener's (a SCO that the LMS
 * opened in a new window). null when there is none (a plain page).
 * @param {Window} [win]
 */
export function findApi(win = window) {
  const api = searchUp(win);
  if (api) return api;
  let opener = null;
  try { opener = win.opener; } catch { opener = null; }
  return opener ? searchUp(opener) : null;
}

/** SCORM 1.2's limit on cmi.suspend_data, in characters. */
export const SUSPEND_LIMIT = 4096;

/**
 * A session on an LMS API: each call checks LMSGetLastError and records the first failure
 * ({call, element, code, text}) in `session.error`, so the page can say what went wrong once.
 * @param {object} api the object findApi gave
 */
export function openSession(api) {
  const session = {
    api,
    error: null,
    open: false,
    /** Records the LMS's error after a call (quiet: a read, which may fail on an empty element). */
    fail(call, element, quiet = false) {
      const code = String(api.LMSGetLastError?.() ?? '');
      if (code === '0' || code === '') return;
      const text = String(api.LMSGetErrorString?.(code) ?? '');
      const e = { call, element, code, text };
      if (!quiet) session.error ??= e;
      session.lastError = e;
    },
    /** LMSInitialize(''); true when it answered "true". */
    initialize() {
      const ok = String(api.LMSInitialize('')) === 'true';
      if (!ok) session.fail('LMSInitialize', '');
      session.open = ok;
      return ok;
    },
    /** LMSGetValue(element); '' when the LMS has nothing (or failed). */
    get(element) {
      const v = api.LMSGetValue(element);
      if (v === '' || v === undefined || v === null) session.fail('LMSGetValue', element, true);
      return v == null ? '' : String(v);
    },
    /** LMSSetValue(element, value); true on success. */
    set(element, value) {
      const ok = String(api.LMSSetValue(element, String(value))) === 'true';
      if (!ok) session.fail('LMSSetValue', element);
      return ok;
    },
    commit() {
      const ok = String(api.LMSCommit('')) === 'true';
      if (!ok) session.fail('LMSCommit', '');
      return ok;
    },
    /** LMSFinish(''): the session ends; later calls are not made. */
    finish() {
      if (!session.open) return false;
      session.open = false;
      const ok = String(api.LMSFinish('')) === 'true';
      if (!ok) session.fail('LMSFinish', '');
      return ok;
    },
  };
  return session;
}

/** Seconds → SCORM 1.2's CMITimespan, HHHH:MM:SS.SS (cmi.core.session_time). */
export function timespan(seconds) {
  const s = Math.max(0, Math.min(seconds, 9999 * 3600 + 3599.99));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s - h * 3600 - m * 60;
  return `${String(h).padStart(4, '0')}:${String(m).padStart(2, '0')}:${sec.toFixed(2).padStart(5, '0')}`;
}

// embed-origins.js — where an iframe page of the playground (embed.html, lab-embed.html) may post
// what the learner did: the origins the author names in its address, `report-to=https://course.example`
// (several separated by spaces). Only exact origins (scheme, host, port; no path) are taken,
// anything else is reported on the console and left out, so a typo never widens where results go.
// postToOrigins() addresses a message to those origins only. No DOM besides window.parent.

/** The hash key that names where results may be posted. */
export const REPORT_KEY = 'report-to';
/** At most this many origins in report-to. */
const MAX_ORIGINS = 8;

/** 'https://course.example' → itself; anything that is not exactly an http(s) origin → null. */
export function exactOrigin(text) {
  const s = String(text ?? '').trim().replace(/\/$/, '');
  if (!/^https?:\/\/[^/?#\s]+$/i.test(s)) return null;
  try {
    const u = new URL(s);
    return u.username || u.password ? null : u.origin; // 'https://x.example:443' → 'https://x.example'
  } catch {
    return null;
  }
}

/**
 * The origins named by report-to in a hash: a list of exact origins (empty when none is named).
 * @param {string} hash
 * @param {(message: string) => void} [warn] told of each value left out
 */
export function reportOrigins(hash, warn = (m) => console.warn(m)) {
  const p = new URLSearchParams(String(hash).replace(/^#/, ''));
  const out = [];
  for (const value of p.getAll(REPORT_KEY)) {
    for (const part of value.split(/[\s,]+/).filter(Boolean)) {
      const o = exactOrigin(part);
      if (!o) warn(`${REPORT_KEY}: "${part.slice(0, 80)}" is not an origin (scheme://host[:port], no path): left out`);
      else if (!out.includes(o) && out.length < MAX_ORIGINS) out.push(o);
    }
  }
  return out;
}

/** The hash's report-to part, to keep when the page rewrites its hash ('' when there is none). */
export function reportSuffix(origins) {
  return origins.length ? `&${REPORT_KEY}=${origins.map(encodeURIComponent).join('%20')}` : '';
}

/**
 * Posts `msg` to the parent window, addressed to each named origin: the browser delivers it only if
 * the parent is at that origin (the guarantee); where the browser tells the parent's origin
 * (location.ancestorOrigins), a parent that is not named is not even addressed. Nothing without
 * origins or a parent.
 * @param {object} msg
 * @param {string[]} origins from reportOrigins
 */
export function postToOrigins(msg, origins) {
  if (window.parent === window) return;
  const parentOrigin = location.ancestorOrigins?.[0];
  for (const o of origins) if (!parentOrigin || parentOrigin === o) window.parent.postMessage(msg, o);
}

// undo.js — undo and redo over what the learner made in a stepper (Ctrl+Z, Ctrl+Shift+Z or Ctrl+Y):
// edits of the grids and the options, random fills, examples, the mode, the direction, the
// exercise (state.js CONTENT_KEYS). The view (the step, the head, the language, the explained
// cell) is not undone. The keystrokes of one cell or field make one entry (they share a typing
// key); a state set from outside (a link, the browser's Back) is an entry too.
// Limits: the last LIMIT entries, in memory only (a reload starts afresh; the URL keeps the state).
import { CONTENT_KEYS } from '../common/state.js';

const LIMIT = 200;
const content = (state) => JSON.stringify(CONTENT_KEYS.map((k) => state[k]));

/** Undo and redo stacks starting at `state`. */
export function createUndo(state) {
  return { past: [], future: [], now: content(state), typing: null };
}

/**
 * Notes the state after a change: true when what the learner made changed (a new entry, or the
 * current one when `typing` is the key of the keystrokes that made it), false for the view alone.
 */
export function noteChange(u, state, typing = null) {
  const now = content(state);
  if (now === u.now) return false;
  if (typing && typing === u.typing && u.past.at(-1) === now) { // typed back to where it started (Escape)
    u.past.pop();
    u.now = now;
    u.typing = null;
    return true;
  }
  if (!typing || typing !== u.typing) {
    u.past.push(u.now);
    if (u.past.length > LIMIT) u.past.shift();
  }
  u.future = [];
  u.now = now;
  u.typing = typing;
  return true;
}

/**
 * One step back (dir −1) or forward (dir 1): `state` with the content of that entry (a new object;
 * the view fields are `state`'s), or null when there is nothing to undo or redo.
 */
export function undoStep(u, state, dir) {
  const from = dir < 0 ? u.past : u.future;
  if (!from.length) return null;
  (dir < 0 ? u.future : u.past).push(u.now);
  u.now = from.pop();
  u.typing = null;
  const values = JSON.parse(u.now);
  const next = { ...state };
  CONTENT_KEYS.forEach((k, i) => { next[k] = values[i]; });
  return next;
}

/** The undo keys: -1 for Ctrl+Z (⌘Z), 1 for Ctrl+Shift+Z or Ctrl+Y, 0 for any other key. */
export function undoKey(e) {
  if (!(e.ctrlKey || e.metaKey) || e.altKey) return 0;
  const k = e.key.toLowerCase();
  if (k === 'z') return e.shiftKey ? 1 : -1;
  if (k === 'y' && !e.shiftKey) return 1;
  return 0;
}

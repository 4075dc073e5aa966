// text-queue.js — the queue of the stepper's tables whose text follows their canvas (panels.js's
// MatrixView): when each table's text, classes and titles are written after an edit's frame, and
// the writes that wait for the same pass (afterFrame: the status line). A view in the queue has
// `visible` (on the screen), `live` (within half a screen of it), `catchUp()` (paint what is
// behind) and `syncText()` (write the text); the queue knows nothing else of it. Limits: one queue
// for the page (every stepper on it shares it), driven by requestAnimationFrame, a MessageChannel,
// requestIdleCallback and timers; flushPending() is synchronous and writes everything.

// The text of the panels on the screen is written right after the frame that shows their painted
// numbers (a message posted from that frame's requestAnimationFrame runs once it is rendered), so
// the next frame shows it: the accessible text is current within two frames of the edit. The
// panels near the screen but not on it are painted and written right after that next frame (not
// before it: their work would delay the text's frame); the others (not rendered:
// content-visibility) in the next idle periods. After 250 ms what is left is written even if no
// frame or idle period came (a hidden tab, a busy page): one table per task, so that an edit
// arriving meanwhile waits for one table's writes, not for all of them at once.
const pending = new Set();
const afterFrameFns = []; // other writes that wait for the same pass (afterFrame)
let scheduled = false;
let idleHandle = 0;
let fallback = 0;
let nearDeferred = false; // the last pass left the panels near the screen for this one
const channel = typeof MessageChannel === 'function' ? new MessageChannel() : null;
if (channel) channel.port1.onmessage = () => runPending(false);
const idle = globalThis.requestIdleCallback ?? ((fn) => setTimeout(() => fn({ timeRemaining: () => 5, didTimeout: false }), 16));

/** runPending(false) right after the next frame is rendered. */
function afterNextFrame() {
  if (scheduled) return;
  scheduled = true;
  requestAnimationFrame(() => (channel ? channel.port2.postMessage(0) : setTimeout(() => runPending(false))));
}

export function queueSync(view) {
  pending.add(view);
  afterNextFrame();
  armFallback();
}

/** A view's text written now; one near the screen is painted first, before it can scroll into view. */
function write(v) {
  if (v.live) v.catchUp();
  v.syncText();
}

function armFallback() {
  if (!fallback) fallback = setTimeout(fallbackFlush, 250);
}

/** The 250 ms fallback: the waiting writes (afterFrame) and one table, then the next in a task of its own. */
function fallbackFlush() {
  fallback = 0;
  runAfterFrame();
  const [v] = pending;
  if (v) { pending.delete(v); write(v); }
  if (pending.size) fallback = setTimeout(fallbackFlush, 0);
}

/**
 * Runs fn right after the next frame is rendered, after the text of the tables on the screen
 * (within 250 ms if no frame comes): for a write that is not the numbers and would otherwise make
 * the edit's frame lay out more than the cell editor (the status line).
 */
export function afterFrame(fn) {
  afterFrameFns.push(fn);
  afterNextFrame();
  armFallback();
}

function runAfterFrame() {
  for (const fn of afterFrameFns.splice(0)) fn();
}

function runPending(idleDeadline) {
  if (!idleDeadline) scheduled = false; else idleHandle = 0;
  // after a frame: the panels on the screen first, alone; those near it after the next frame
  // (once: while edits keep coming, they do not wait for a pause)
  let onScreen = false;
  if (!idleDeadline && !nearDeferred) for (const v of pending) if (v.visible) { onScreen = true; break; }
  for (const v of pending) {
    if (!idleDeadline && (!v.live || (onScreen && !v.visible))) continue; // later, or in an idle period
    if (idleDeadline && idleDeadline.timeRemaining() < 2) break;
    pending.delete(v);
    write(v);
  }
  if (!idleDeadline) { nearDeferred = false; runAfterFrame(); }
  if (!pending.size) { clearTimeout(fallback); fallback = 0; return; }
  let near = false;
  for (const v of pending) if (v.live) { near = true; break; }
  if (near && !idleDeadline) { nearDeferred = onScreen; afterNextFrame(); }
  else if (!idleHandle) idleHandle = idle(runPending);
}

/** Brings every table's text up to date now (before a copy, a selection, a focus). */
export function flushPending() {
  clearTimeout(fallback);
  fallback = 0;
  for (const v of pending) write(v);
  pending.clear();
  runAfterFrame();
}

/** Takes a view out of the queue; whether it was in it (its text was behind). */
export function takePending(view) {
  return pending.delete(view);
}

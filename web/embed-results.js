// embed-results.js — for the course page that holds <iframe src=".../embed.html#…&report-to=…">:
// receives the learner's exercise results from the stepper iframes and hands each to a callback.
//
//   <iframe id="quiz1" src="https://tool.example/embed.html#exercise=identity-softmax&report-to=https://course.example" …>
//   <script type="module">  (in a file of your own: a strict CSP allows no inline script)
//     import { onExerciseResult, requestExerciseResult } from 'https://tool.example/embed-results.js';
//     onExerciseResult('https://tool.example', (result, frame) => {
//       // result: {id, total, right, wrong, empty, solved, revealed, reset, score}
//       gradebook.record(frame.id, result.score, result.solved);
//     });
//     requestExerciseResult(document.getElementById('quiz1'), 'https://tool.example'); // ask now
//   </script>
//
// The stepper's frame posts a result only to the origin named in its report-to parameter, and
// this side takes a message only when it comes from the origin you name here (the stepper's
// site) and from one of this page's iframes; each field is checked for its type and copied, so
// nothing else of the message reaches your callback. The frame never sends the expected values.
// Each accepted result is also dispatched on its iframe as an 'attention-stepper-result' event
// (detail: the result).
//
// The training lab's frame (lab-embed.html#…&report-to=…) reports its run the same way:
//     onLabMessage('https://tool.example', (m, frame) => {
//       // m: {type: 'progress' | 'done' | 'diverged' | 'status', status, step, steps, loss, val, message}
//       if (m.type === 'done') gradebook.record(frame.id, 1);
//     });
//     requestLabStatus(document.getElementById('lab1'), 'https://tool.example'); // ask now
// (each also dispatched on its iframe as a 'gpt-lab-message' event).

/** The message type of a learner's result, from the frame to its parent. */
export const RESULT_TYPE = 'attention-stepper:exercise';
/** The message type of the parent's request for the current result. */
export const REQUEST_RESULT_TYPE = 'attention-stepper:request-result';

const COUNTS = ['total', 'right', 'wrong', 'empty'];
const FLAGS = ['solved', 'revealed', 'reset'];

/** A message's result, copied field by field with the right types; null if it is not one. */
export function readResult(data) {
  if (!data || typeof data !== 'object' || data.type !== RESULT_TYPE) return null;
  if (data.id !== null && (typeof data.id !== 'string' || data.id.length > 64)) return null;
  const out = { id: data.id };
  for (const k of COUNTS) {
    if (!Number.isInteger(data[k]) || data[k] < 0 || data[k] > 1e6) return null;
    out[k] = data[k];
  }
  for (const k of FLAGS) out[k] = data[k] === true;
  out.score = typeof data.score === 'number' && data.score >= 0 && data.score <= 1 ? data.score : 0;
  return out;
}

/** The prefix of the lab frame's message types: 'gpt-lab:progress', 'gpt-lab:done', 'gpt-lab:diverged', 'gpt-lab:status'. */
export const LAB_PREFIX = 'gpt-lab:';
/** The message type of the parent's request for the lab's current status. */
export const REQUEST_LAB_STATUS_TYPE = 'gpt-lab:request-status';
const LAB_KINDS = ['progress', 'done', 'diverged', 'status'];
const LAB_STATUSES = ['loading', 'idle', 'starting', 'training', 'paused', 'done', 'diverged', 'error', 'destroyed'];

/** A lab frame's message, copied field by field with the right types; null if it is not one. */
export function readLabMessage(data) {
  if (!data || typeof data !== 'object' || typeof data.type !== 'string' || !data.type.startsWith(LAB_PREFIX)) return null;
  const type = data.type.slice(LAB_PREFIX.length);
  if (!LAB_KINDS.includes(type)) return null;
  const count = (v) => (Number.isInteger(v) && v >= 0 && v <= 1e9 ? v : null);
  const real = (v) => (typeof v === 'number' && Number.isFinite(v) ? v : null);
  const step = count(data.step);
  const steps = count(data.steps);
  if (step === null || steps === null) return null;
  return {
    type,
    status: LAB_STATUSES.includes(data.status) ? data.status : null,
    step,
    steps,
    loss: real(data.loss),
    val: real(data.val),
    message: typeof data.message === 'string' ? data.message.slice(0, 1000) : '',
  };
}

/** The iframe of this page whose window sent a message (null if none did). */
function frameOf(source) {
  for (const frame of document.querySelectorAll('iframe')) if (frame.contentWindow === source) return frame;
  return null;
}

/**
 * Calls `callback(result, iframe)` for each result a stepper iframe of this page posts.
 * @param {string | string[]} origin the stepper's origin(s), e.g. 'https://tool.example'
 * @param {(result: object, frame: HTMLIFrameElement) => void} callback
 * @returns {() => void} stops listening
 */
export function onExerciseResult(origin, callback) {
  return listen(origin, readResult, 'attention-stepper-result', callback);
}

/**
 * Calls `callback(message, iframe)` for each report a lab iframe of this page posts (progress,
 * done, diverged, or the status it was asked for).
 * @param {string | string[]} origin the lab's origin(s), e.g. 'https://tool.example'
 * @param {(message: object, frame: HTMLIFrameElement) => void} callback
 * @returns {() => void} stops listening
 */
export function onLabMessage(origin, callback) {
  return listen(origin, readLabMessage, 'gpt-lab-message', callback);
}

/** Messages from `origin` read by `read`, from an iframe of this page: its event, then the callback. */
function listen(origin, read, eventName, callback) {
  const allowed = (Array.isArray(origin) ? origin : [origin]).map((o) => new URL(o).origin);
  const onMessage = (e) => {
    if (!allowed.includes(e.origin)) return;
    const data = read(e.data);
    if (!data) return;
    const frame = frameOf(e.source);
    if (!frame) return;
    frame.dispatchEvent(new CustomEvent(eventName, { detail: data }));
    callback(data, frame);
  };
  window.addEventListener('message', onMessage);
  return () => window.removeEventListener('message', onMessage);
}

/**
 * Asks a stepper iframe for its current result; the answer arrives through onExerciseResult. The
 * request is addressed to `origin`, so a frame that navigated elsewhere does not receive it.
 * @param {HTMLIFrameElement} frame
 * @param {string} origin the stepper's origin
 */
export function requestExerciseResult(frame, origin) {
  frame.contentWindow?.postMessage({ type: REQUEST_RESULT_TYPE }, new URL(origin).origin);
}

/**
 * Asks a lab iframe for its run's status; the answer ({type: 'status', …}) arrives through
 * onLabMessage. Addressed to `origin`, so a frame that navigated elsewhere does not receive it.
 * @param {HTMLIFrameElement} frame
 * @param {string} origin the lab's origin
 */
export function requestLabStatus(frame, origin) {
  frame.contentWindow?.postMessage({ type: REQUEST_LAB_STATUS_TYPE }, new URL(origin).origin);
}

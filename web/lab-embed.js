// lab-embed.js — web/lab-embed.html: the training lab (<gpt-lab>) alone, for an <iframe> on a
// course page that allows no scripts of its own.
//
// Settings: the hash, with the element's attributes as keys (#task=copy&steps=500&seed=7&layer=2
// &head=3&sections=training+maps&autostart&lang=zh; gpt-lab.js lists them; the training page's
// link keys, n_layer or n-layer alike, are read too).
// Height: posted to the parent on every size change (embed-height.js; web/embed-resize.js on the
// course page sets the iframe's height from it).
// Progress: only when the author names the course's origin, #…&report-to=https://course.example
// (several separated by spaces), the run's reports go to the parent, addressed to that origin (the
// browser delivers them to no other):
//   {type: 'gpt-lab:progress' | 'gpt-lab:done' | 'gpt-lab:diverged', status, step, steps, loss, val,
//    message}                                (message: the core's words for a divergence, else '')
// and the parent may ask for the current one with {type: 'gpt-lab:request-status'}: the answer,
// {type: 'gpt-lab:status', …}, goes to the asker only, and only if it is a named origin. Without
// report-to, nothing but the height is posted. (web/embed-results.js onLabMessage is the course
// page's side.)
import { RUN_ATTRS, TRAIN_PAGE_URL } from './gpt-lab.js';
import { reportOrigins, postToOrigins } from './embed-origins.js';
import { reportHeight } from './embed-height.js';
import { LAB_PREFIX, REQUEST_LAB_STATUS_TYPE } from './embed-results.js';

/** The element's attributes a hash may set (the run's, with either spelling, and the element's own). */
const KEYS = new Map([
  ...Object.entries(RUN_ATTRS).flatMap(([attr, key]) => [[attr, attr], [key, attr]]),
  ...['sections', 'autostart', 'layer', 'head'].map((k) => [k, k]),
]);

const hash = location.hash.replace(/^#/, '');
const origins = reportOrigins(hash);
const lab = document.createElement('gpt-lab');
for (const [k, v] of new URLSearchParams(hash)) {
  const attr = KEYS.get(k);
  if (attr && v.length <= 1_000_000) lab.setAttribute(attr, v);
}
document.documentElement.lang = lab.getAttribute('lang') === 'zh' ? 'zh-CN' : 'en';
document.getElementById('lab').append(lab);
const open = document.getElementById('open-lab');
open.href = lab.link;

/** The lab's last report (what a request for the status is answered with). */
let last = { step: 0, steps: 0, loss: null, val: null, message: '' };

function report(kind, detail = {}) {
  const message = kind === 'diverged' ? String(detail.message ?? '') : kind === 'status' ? last.message : '';
  last = { ...last, ...detail, message };
  return { type: LAB_PREFIX + kind, status: lab.status, step: last.step, steps: last.steps, loss: last.loss, val: last.val, message: last.message };
}

for (const kind of ['progress', 'done', 'diverged']) {
  lab.addEventListener(`gpt-lab-${kind}`, (e) => {
    const msg = report(kind, e.detail);
    if (origins.length) postToOrigins(msg, origins);
  });
}
lab.addEventListener('gpt-lab-ready', () => { open.href = lab.link; });

const postHeight = reportHeight();
postHeight();
window.addEventListener('message', (e) => {
  if (e.source !== window.parent || window.parent === window) return;
  // to the asker only, and only if it is a named origin
  if (e.data?.type === REQUEST_LAB_STATUS_TYPE && origins.includes(e.origin)) window.parent.postMessage(report('status'), e.origin);
});
/** For tests and the console. */
window.__lab = { element: lab, origins, trainPage: TRAIN_PAGE_URL };

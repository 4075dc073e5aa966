// embed.js — web/embed.html: the attention stepper alone, for an <iframe> on a course page.
//
// State: from the hash, either a permalink (#s=1.…, what "copy link" gives) or simple parameters
// (#preset=causal-4&lang=zh&n-head=2&causal=true&mask=inclusive&base=1&scale=false&softmax=naive
// &seed=3&view=step&step=2&tools=none), and an exercise: #exercise=identity-softmax, or
// #preset=causal-4&exercise=my-quiz&ask=weights[3,*]&tolerance=decimals:3 (as the element's
// attributes). Edits are written back to the hash (history.replaceState), so the iframe's own URL
// is always a link to what it shows.
// Height: posted to the parent window on every size change as
//   {type: 'attention-stepper:height', height: <CSS px>, href: location.href}
// (web/embed-resize.js, on the parent page, sets the iframe's height from it).
// Results: only when the author names the course's origin, #…&report-to=https://course.example
// (several separated by spaces), the learner's result goes to the parent at each check, reveal and
// reset of an exercise, addressed to that origin (the browser delivers it to no other):
//   {type: 'attention-stepper:exercise', id, total, right, wrong, empty, solved, revealed, reset,
//    score}                                 (score = right / total; never the expected values)
// and the parent may ask for the current one with {type: 'attention-stepper:request-result'}: the
// answer goes to a named origin only, and only if the request came from it. Without report-to,
// nothing but the height is posted. (web/embed-results.js is the course page's side.)
import { el } from './common/ui.js';
import { sharedAttention, refreshTrace, PLAYGROUND_URL } from './attention-stepper.js';
import { mountStepper } from './stepper/stepper.js';
import { validateState } from './common/state.js';
import { bindPermalink, encodeState } from './common/permalink.js';
import { attachShareTools, keepInToolbar } from './stepper/share.js';
import { stateFromHash, reportOrigins, reportSuffix, resultMessage, REQUEST_RESULT_TYPE } from './embed-state.js';
import { postToOrigins } from './embed-origins.js';
import { reportHeight } from './embed-height.js';

const root = document.getElementById('stepper');
const openLink = document.getElementById('open-playground');

/** The origins the author named (report-to): the only ones results are posted to. */
const origins = reportOrigins(location.hash);
const suffix = reportSuffix(origins);
let controller = null;
/** Origins that asked for the result before the stepper was up: answered once it is. */
const asked = new Set();

/** The result to the named origins only (embed-origins.js). */
const postResult = (r) => postToOrigins(resultMessage(r), origins);
/** The height to the parent, on every change and when it asks (embed-height.js). */
const postHeight = reportHeight();

async function main() {
  const params = new URLSearchParams(location.hash.replace(/^#/, ''));
  let attention;
  try {
    attention = await sharedAttention();
  } catch (e) {
    root.replaceChildren(el('p', 'apx-failed', `failed to load the attention core: ${e?.message ?? e}`));
    postHeight();
    return;
  }
  const state = stateFromHash(location.hash, attention);
  document.documentElement.lang = state.lang === 'zh' ? 'zh' : 'en';
  root.replaceChildren();
  const toolSlot = el('div');
  const body = el('div');
  root.append(toolSlot, body);
  controller = await mountStepper(body, { state, embed: true, lang: state.lang, attention });
  const link = bindPermalink(controller, { validate: validateState, restore: false, suffix });
  // write the state into the hash now, so the iframe's URL is a permalink from the start (with
  // report-to kept: a reload of the frame reports to the same course)
  history.replaceState(history.state, '', encodeState(controller.getState()) + suffix);
  const playgroundLink = () => PLAYGROUND_URL + encodeState(controller.getState());
  if (params.get('tools') !== 'none') {
    attachShareTools(toolSlot, controller, { link: playgroundLink, panelRoot: body });
    keepInToolbar(toolSlot, body);
    refreshTrace(controller);
  }
  const syncOpen = () => { openLink.href = playgroundLink(); };
  syncOpen();
  controller.on('change', () => {
    syncOpen();
    document.documentElement.lang = controller.getState().lang === 'zh' ? 'zh' : 'en';
  });
  if (origins.length) controller.on('exercise', postResult);
  for (const o of asked) answerRequest(o);
  asked.clear();
  window.__stepper = { controller, link };
  postHeight();
}

/** The current result, to the origin that asked (a named one: the listener checked). */
function answerRequest(origin) {
  window.parent.postMessage(resultMessage(controller.exerciseResult()), origin);
}

window.addEventListener('message', (e) => {
  if (e.source !== window.parent || window.parent === window) return;
  if (e.data?.type === REQUEST_RESULT_TYPE && origins.includes(e.origin)) {
    // to the asker only, and only if it is a named origin; before the stepper is up, once it is
    if (controller) answerRequest(e.origin);
    else asked.add(e.origin);
  }
});
main();

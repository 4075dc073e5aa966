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
import { el } from './ui.js';
import { sharedAttention, presetState, applySpec, refreshTrace, PLAYGROUND_URL } from './attention-stepper.js';
import { mountStepper } from './stepper/stepper.js';
import { defaultState, validateState } from './stepper/state.js';
import { decodeState, bindPermalink, encodeState } from './stepper/permalink.js';
import { attachShareTools, keepInToolbar } from './stepper/share.js';
import { EXERCISES, withReadyExercise } from './stepper/exercise.js';

const root = document.getElementById('stepper');
const openLink = document.getElementById('open-playground');

/** #preset=…&lang=… → a spec for applySpec (or null when the hash has none of those keys). */
export function hashSpec(hash) {
  const p = new URLSearchParams(String(hash).replace(/^#/, ''));
  const spec = {};
  const opts = {};
  const num = (v) => (/^\d+$/.test(v) ? Number(v) : v);
  const bool = (v) => (v === '' || v === 'true' || v === '1' ? true : v === 'false' || v === '0' ? false : v);
  for (const [k, v] of p) {
    if (k === 'preset' || k === 'lang' || k === 'mode' || k === 'view') spec[k] = v;
    else if (k === 'exercise' || k === 'ask' || k === 'tolerance') spec[k] = v;
    else if (k === 'seed' || k === 'step' || k === 'head') spec[k] = num(v);
    else if (k === 'n-head' || k === 'n_head') opts.n_head = num(v);
    else if (k === 'base') opts.base = num(v);
    else if (k === 'causal' || k === 'scale') opts[k] = bool(v);
    else if (k === 'mask' || k === 'softmax') opts[k] = v;
  }
  if (Object.keys(opts).length) spec.options = opts;
  return Object.keys(spec).length ? spec : null;
}

function postHeight() {
  const h = Math.ceil(document.documentElement.getBoundingClientRect().height);
  if (h === postHeight.last) return;
  postHeight.last = h;
  if (window.parent !== window) window.parent.postMessage({ type: 'attention-stepper:height', height: h, href: location.href }, '*');
}

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
  let state = decodeState(location.hash, { validate: validateState });
  if (!state) {
    const spec = hashSpec(location.hash);
    state = defaultState();
    if (spec?.preset) state = presetState(spec.preset, attention) ?? state;
    else if (EXERCISES[spec?.exercise]) state = withReadyExercise(state, spec.exercise, attention);
    if (spec) state = applySpec(state, { ...spec, preset: undefined }, attention);
  }
  document.documentElement.lang = state.lang === 'zh' ? 'zh' : 'en';
  root.replaceChildren();
  const toolSlot = el('div');
  const body = el('div');
  root.append(toolSlot, body);
  const controller = await mountStepper(body, { state, embed: true, lang: state.lang, attention });
  const link = bindPermalink(controller, { validate: validateState, restore: false });
  // write the state into the hash now, so the iframe's URL is a permalink from the start
  history.replaceState(history.state, '', encodeState(controller.getState()));
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
  window.__stepper = { controller, link };
  postHeight();
}

new ResizeObserver(postHeight).observe(document.documentElement);
window.addEventListener('message', (e) => {
  if (e.source === window.parent && e.data?.type === 'attention-stepper:request-height') {
    postHeight.last = undefined;
    postHeight();
  }
});
main();

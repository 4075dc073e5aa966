// main.js — the training page (web/train/index.html): train the tiny GPT in a Web Worker and
// watch it learn; run the tutorials' two experiments; see a prompt's attention maps and open any
// head in the Attention Stepper; generate one token at a time with the KV cache made visible;
// download and upload checkpoints. The page's thread only lays out what the worker answers
// (worker.js owns the wasm model), so it stays responsive while the model trains.
//
// This file only wires the page: it reads the state (the link, else the defaults and the
// remembered language), makes the context the sections share (context.js), renders the header,
// the sections (sections.js) and the footer, routes the workers' events to their sections, follows the
// link, and starts the worker. The sections, one module each, a class with the same interface
// (new XSection(ctx); render() → element, mounted() if it needs the document, refresh(),
// onMessage(m) for a worker's events): section-data.js, section-training.js, section-experiments.js, section-maps.js,
// section-walk.js (the whole block, step by step), section-next-token.js, section-surprisal.js, section-generation.js, section-checkpoints.js, section-runs.js
// (the runs kept in the browser, run-store.js). Their pieces: config.js (the state, per-field
// validation, the run spec, the permalink), fields.js (the form's pieces), client.js (requests to
// the worker), chart.js (uPlot loss charts), maps.js (attention maps, stepper links), kv.js (the
// KV-cache view), experiments.js (the experiment's sentence), i18n.js (English and 中文),
// ../common/ui.js (the DOM helpers shared with the stepper).
// No inline scripts or styles: the page runs under script-src 'self' 'wasm-unsafe-eval' and
// style-src 'self'.
import { defaultState, cleanState, decodeHash } from './config.js';
import { startWorker } from './client.js';
import { storedLang, storeLang, loadStrings, stringsLoaded } from './i18n.js';
import { el, langSwitch, scrollBehavior } from '../common/ui.js';
import { createContext } from './context.js';
import { button, buttonBar } from './fields.js';
import { makeSections, assemble } from './sections.js';

const app = document.getElementById('app');
const fromLink = decodeHash(location.hash);
const initial = fromLink ?? cleanState({ ...defaultState(), lang: storedLang() ?? 'en' });
const worker = startWorker();
// Chinese (remembered or in the link) is fetched before the first render: the page never shows
// English first (index.html's loading line is in both languages)
await loadStrings(initial.lang);
const ctx = createContext({
  app,
  state: initial,
  worker,
  startExpWorker: () => route(startWorker(), 'experiments'),
  render,
});
/** The sections in the page's order (sections.js: declared once, with <gpt-lab>). */
const sections = makeSections(ctx);
ctx.sections = sections;
sections.maps.onShown = () => sections.walk.refresh(); // the walk is of the maps' prompt

/** A worker's events go to one section's onMessage. */
function route(worker, name) {
  worker.on((m) => sections[name].onMessage(m));
  return worker;
}
route(ctx.worker, 'training');
ctx.worker.on((m) => sections.open.onMessage(m)); // an opened model's reading progress

// ───────────────────────────── the page ─────────────────────────────

function render() {
  const { t, state } = ctx;
  const focusId = document.activeElement?.id;
  document.documentElement.lang = state.lang === 'zh' ? 'zh-CN' : 'en';
  document.title = t('doc.title');
  const { top, rest } = assemble(ctx, Object.keys(sections), { numbered: true });
  const page = el('div', 'aps tr-page');
  page.append(skipLink(rest[0]), header(), top, ...rest, footer());
  app.replaceChildren(page);
  for (const s of Object.values(sections)) s.mounted?.();
  for (const s of Object.values(sections)) s.refresh();
  if (focusId) document.getElementById(focusId)?.focus();
}

/**
 * The page's first Tab stop, seen when focused: past the header and the data and training forms to
 * the first section below them. The hash holds the page's settings, so it moves the focus without
 * touching it.
 */
function skipLink(target) {
  const a = el('a', 'aps-skip', ctx.t('nav.skip'));
  a.href = '#';
  a.id = 'tr-skip';
  a.hidden = !target;
  a.addEventListener('click', (e) => {
    e.preventDefault();
    target.tabIndex = -1;
    target.focus({ preventScroll: true });
    target.scrollIntoView({ block: 'start', behavior: scrollBehavior() });
  });
  return a;
}

function header() {
  const { t } = ctx;
  const h = el('header', 'aps-header tr-header');
  const titles = el('div', 'aps-titles');
  const nav = el('nav', 'tr-nav');
  nav.setAttribute('aria-label', t('nav.label'));
  const back = el('a', 'tr-nav-link', t('nav.stepper'));
  back.href = '../index.html';
  back.id = 'tr-nav-stepper';
  nav.append(back, el('span', 'tr-nav-here', t('nav.here')));
  titles.append(nav, el('h1', 'aps-title', t('app.title')), el('p', 'aps-lede', t('app.lede')));
  h.append(titles, langSwitch({ lang: ctx.state.lang, label: t('lang.label'), idPrefix: 'tr-lang-', onPick: setLang }));
  return h;
}

let langPicked = 0; // the last switch wins over one whose strings are still loading

/** The switch: the language's strings first (Chinese is fetched on first use), then the page in it. */
async function setLang(code) {
  const pick = ++langPicked;
  storeLang(code);
  if (!stringsLoaded(code)) await loadStrings(code);
  if (pick !== langPicked) return;
  ctx.state.lang = code;
  ctx.setState(ctx.state);
  render();
  ctx.writeHash();
}

function footer() {
  const { t } = ctx;
  const msg = el('span', 'aps-hint');
  msg.setAttribute('aria-live', 'polite');
  const copy = button(t('link.copy'), 'copy-link', async () => {
    const url = ctx.linkUrl();
    const ok = await copyText(url);
    msg.textContent = ok ? t('link.copied') : t('link.failed', { url });
  });
  const f = el('footer', 'aps-footer tr-footer');
  f.append(buttonBar(copy, msg), el('p', '', t('app.footer')));
  return f;
}

async function copyText(text) {
  try { await navigator.clipboard.writeText(text); return true; } catch { return false; }
}

// a link followed within the page (a lesson's next experiment): its state, the page again
addEventListener('hashchange', async () => {
  const hash = location.hash;
  if (hash === ctx.lastHash) return;
  const s = decodeHash(hash);
  if (!s) return;
  if (!stringsLoaded(s.lang)) await loadStrings(s.lang);
  if (location.hash !== hash || hash === ctx.lastHash) return; // another link meanwhile: its own event
  ctx.lastHash = hash;
  ctx.setState(s);
  render();
});

// ───────────────────────────── start ─────────────────────────────

/** For tests and the console: the state, the runtime and the charts. */
window.trainPage = {
  getState: () => JSON.parse(JSON.stringify(ctx.state)),
  runtime: ctx.rt,
  chartPoints: () => sections.training.chartPoints(),
  expChartPoints: () => sections.experiments.chartPoints(),
  keptChartPoints: () => sections.runs.chartPoints(),
  worker: ctx.worker,
};

render();
sections.runs.boot(); // the kept runs, listed while the core loads
try {
  const { tasks } = await ctx.worker.call('init');
  ctx.rt.tasks = tasks;
  ctx.rt.status = 'idle';
  app.dataset.status = 'ready';
  // the prompts the learner left empty: the task's defaults, known now
  sections.maps.followTask();
  sections.generation.followTask();
  sections.next.followTask();
  sections.data.refresh();
  ctx.refreshRun();
} catch (e) {
  ctx.rt.status = 'error';
  app.dataset.status = 'failed';
  ctx.rt.message = { kind: 'error', text: ctx.t('boot.failed', { message: e.message }) };
  sections.training.refresh();
}

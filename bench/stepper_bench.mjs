#!/usr/bin/env node
// stepper_bench.mjs — how fast the stepper answers an edit, and how much the page weighs.
// A benchmark, not a test: it prints numbers and never fails on them.
//
//   npm run bench:stepper                        # N = 50 edits
//   node bench/stepper_bench.mjs --n 200         # more edits
//   node bench/stepper_bench.mjs --web /tmp/old  # another copy of web/ (a before/after comparison
//                                                # in one sitting: check out the old web/ there)
//   node bench/stepper_bench.mjs --profile       # + where the main thread's time goes (a Chromium
//                                                # trace): wall and CPU time (the trace's thread
//                                                # time, which other processes' load inflates far
//                                                # less) per edit, over the whole run and from each
//                                                # input event to the end of its frame, with
//                                                # the canvases' raster at the frame on its own
//                                                # line; AP_TRACE_OUT=file.json keeps the trace
//   node bench/stepper_bench.mjs --cpu-profile   # + JS time per function (V8's sampling profiler)
//   node bench/stepper_bench.mjs --width 1920    # another window width (default 1400 × 1000)
//   node bench/stepper_bench.mjs --variants      # + edit → frame on each modern variant's example
//                                                # (RoPE, ALiBi, GQA, window + sink, FlashAttention's
//                                                # tiles, latent attention): median and p90 of N
//                                                # edits of one cell of its Q or W_q, printed only
//   node bench/stepper_bench.mjs --against /tmp/main-web --rounds 3
//                                                # two copies of web/ in one sitting, interleaved:
//                                                # a server for each, the rounds alternate which
//                                                # goes first (A B, B A, …) so a load hits both
//                                                # alike; prints each round's median and p90 of
//                                                # edit → frame and edit → text (with --profile
//                                                # also the CPU time of the critical path) and the
//                                                # ratios of their medians over the rounds.
//                                                # --web is A (default web/), --against is B
//
// What it does:
//   1. starts its own static server (http-server from node_modules) on 127.0.0.1, a free port;
//   2. opens the playground page (web/index.html) in Debian's Chromium (the launch options of
//      playwright.config.mjs) and loads a state with 16 × 16 matrices (x, W_q, W_k, W_v, W_o),
//      4 heads and the causal mask;
//   3. edits one cell of W_q N times the way a user does (the cell's <input>, an 'input' event),
//      with the page scrolled to the scores panel (what the edit changes is on screen), and
//      times, in the page:
//        edit → frame rendered   from the input event until the main thread has produced the
//                                first frame that holds the new numbers (its requestAnimationFrame
//                                callbacks, style, layout, paint and commit are done; raster and
//                                display follow on other threads). A rAF loop marks the frames;
//                                a message posted during a frame runs right after its rendering.
//        in frames               the frame holding the new numbers and the one holding the new
//                                text of the tables, counted from the edit (1 = the first frame
//                                after it), and how many edits had their text within two frames;
//        edit → next frame's rAF this benchmark's first measure (from before the canvas repaint):
//                                the rAF callback of the frame *after* the one holding the new
//                                numbers. It adds up to one frame interval (16.7 ms at 60 Hz) to
//                                the above, so it never goes below about 17 ms however little the
//                                page does; kept for comparison.
//        edit → 'trace'          from the input event to the component's 'trace' event (the
//                                recompute: waiting for its frame, the core, updating the DOM);
//        core trace              the wasm core alone on the same spec (api.trace, JSON in and
//                                out), on a second instance of the core in the same page;
//   4. sums gzip -9 of every file each page loads (html, js, css, wasm): the transfer size a
//      static host with gzip serves;
//   5. stops the browser and the server.
import { runPageBench, transfer, startServer } from './web_server.mjs';

const arg = (name, dflt) => {
  const i = process.argv.indexOf(name);
  return i > 0 && i + 1 < process.argv.length ? process.argv[i + 1] : dflt;
};
const N = Number(arg('--n', 50));
const WEB = arg('--web', 'web');
const WIDTH = Number(arg('--width', 1400));
const PROFILE = process.argv.includes('--profile');
const CPU_PROFILE = process.argv.includes('--cpu-profile');
const AGAINST = arg('--against', null);
const ROUNDS = Number(arg('--rounds', 3));
const VARIANTS = process.argv.includes('--variants');
/** The variants' examples (web/common/presets.js) and the grid an edit changes in each. */
const VARIANT_EXAMPLES = [['rope-distance', 'Q'], ['alibi-heads', 'Q'], ['gqa-8-2', 'Q'], ['window-sink', 'Q'], ['flash-tiles', 'W_q'], ['mla-latent', 'W_q']];
const SIZE = 16;
const HEADS = 4;
/** A deterministic n × n matrix as text, 2 decimals in ±1. */
function matrixText(n, seed) {
  let s = seed >>> 0;
  const rnd = () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32) * 2 - 1;
  return Array.from({ length: n }, () => Array.from({ length: n }, () => rnd().toFixed(2)).join(' ')).join('\n');
}

function benchState() {
  return {
    version: 1,
    preset: 'custom',
    mode: 'x',
    matrices: {
      x: matrixText(SIZE, 1), W_q: matrixText(SIZE, 2), W_k: matrixText(SIZE, 3), W_v: matrixText(SIZE, 4), W_o: matrixText(SIZE, 5),
      Q: '1 0\n0 1', K: '1 0\n0 1', V: '1 0\n0 1',
    },
    use_W_o: true,
    options: { n_head: HEADS, causal: true, mask: 'strict', base: 0, scale: true, softmax: 'stable' },
    seed: 1, view: 'all', step: 0, head: 0, lang: 'en', focus: null,
  };
}

const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  const i = (s.length - 1) * q;
  const lo = Math.floor(i);
  return s[lo] + (s[Math.ceil(i)] - s[lo]) * (i - lo);
};
const ms = (v) => v.toFixed(2).padStart(8);

async function measureEdits(page, url, hooks = {}) {
  // the core in a Worker (the alternative to the main thread, measured and not taken): a module
  // worker served from the page's origin by the benchmark itself (web/ has no worker), same wasm,
  // same spec
  await page.route('**/__bench_worker.mjs', (route) => route.fulfill({
    contentType: 'text/javascript',
    body: `import { loadAttention } from './attention.js';
const api = await loadAttention();
onmessage = (e) => { const t0 = performance.now(); const trace = api.trace(e.data); postMessage({ trace, ms: performance.now() - t0 }); };
postMessage('ready');`,
  }));
  await page.goto(`${url}/index.html`);
  await page.waitForFunction(() => window.attentionStepper, null, { timeout: 30_000 });
  await page.evaluate((s) => window.attentionStepper.setState(s), benchState());
  await page.locator('figure[data-panel="scores"] tbody tr').nth(SIZE - 1).waitFor();
  const shape = await page.evaluate(() => ({
    rows: document.querySelectorAll('figure[data-panel="scores"] tbody tr').length,
    heads: window.attentionStepper.getState().options.n_head,
  }));
  if (shape.rows !== SIZE || shape.heads !== HEADS) throw new Error(`the page did not take the 16×16, 4-head state: ${JSON.stringify(shape)}`);
  // open the editor of W_q[0][0] (double-click, as a user does)
  await page.locator('[data-matrix="W_q"] td[data-r="0"][data-c="0"]').dblclick();
  await page.locator('[data-matrix="W_q"] input.aps-cell-input').waitFor();
  // watch the scores: the page scrolled to W_q, beside which K and V show (they do not change
  // with W_q); a user watches what the edit changes. The cell editor keeps the focus.
  await page.evaluate(() => document.querySelector('figure[data-panel="scores"]').scrollIntoView({ block: 'start' }));
  await page.waitForTimeout(300);
  await hooks.before?.();
  const result = await page.evaluate(async ({ N, SIZE }) => {
    const ctl = window.attentionStepper;
    const input = document.querySelector('[data-matrix="W_q"] input.aps-cell-input');
    const steps = document.querySelector('.aps-steps');
    const { loadAttention } = await import('/attention.js');
    const core = await loadAttention(); // a second instance, for the core-alone timing
    const nativeRaf = window.requestAnimationFrame.bind(window);
    const raf = () => new Promise((r) => nativeRaf(r));
    const idle = (t) => new Promise((r) => setTimeout(r, t));
    // Frame marks: a rAF loop registered before any edit, so its callback runs first in every
    // frame and sets phase = 'raf'; the message it posts runs once that frame's rendering is done
    // (a task queued during the frame's rendering update runs after it) and sets phase = 'idle'.
    let phase = 'idle';
    let afterRender = [];
    const channel = new MessageChannel();
    channel.port1.onmessage = () => {
      phase = 'idle';
      const now = performance.now();
      const due = afterRender;
      afterRender = [];
      for (const f of due) f(now);
    };
    let looping = true;
    let frameNo = 0; // frames begun so far
    const loop = () => nativeRaf(() => {
      frameNo++;
      phase = 'raf';
      channel.port2.postMessage(0);
      if (looping) loop();
    });
    loop();
    await raf();
    /** Resolves with [frame rendered, next frame's rAF] for a mutation that just happened. */
    const frameTimes = (mark) => new Promise((resolve) => {
      const t = {};
      const rendered = (now) => { t.rendered = now; t.frame = frameNo; if (mark && counting) performance.mark(mark); done(); };
      const done = () => { if (t.rendered && t.nextRaf) resolve([t.rendered, t.nextRaf, t.frame]); };
      // the next frame's rAF (the old measure)
      nativeRaf(() => { t.nextRaf = performance.now(); done(); });
      if (phase === 'raf') afterRender.push(rendered); // this frame
      else nativeRaf(() => afterRender.push(rendered)); // the next one
    });
    const rows = { rendered: [], nextRaf: [], text: [], frames: [], textFrames: [], trace: [], core: [], status: [], loafScript: [], loafRender: [] };
    // Long animation frames (> 50 ms) of the edits: the script part and the style/layout/paint part
    let counting = false;
    const loaf = new PerformanceObserver((list) => {
      if (!counting) return;
      for (const e of list.getEntries()) {
        const end = e.startTime + e.duration;
        rows.loafRender.push(e.renderStart ? end - e.renderStart : 0);
        rows.loafScript.push(e.scripts.reduce((a, x) => a + x.duration, 0));
      }
    });
    try { loaf.observe({ type: 'long-animation-frame', buffered: false }); } catch { /* older browser */ }
    let lastQ = null;
    const qCell = () => document.querySelector('figure[data-panel="scores"] td[data-r="0"][data-c="0"]');
    for (let i = 0; i < N + 3; i++) { // 3 warm-up edits, not counted
      counting = i >= 3;
      const value = (0.5 + ((i % 40) + 1) * 0.0125).toFixed(4);
      const before = qCell().textContent;
      // the component's 'trace' event comes once the new numbers are on the page (in the DOM, or
      // painted on its canvases): from there, the frame that shows them
      let tTrace = 0;
      let q00 = null;
      let shown;
      const painted = new Promise((resolve) => { shown = resolve; });
      const off = ctl.on('trace', (tr) => {
        if (tTrace) return;
        tTrace = performance.now();
        q00 = tr.heads[0].q[0][0];
        shown(frameTimes('aps-frame'));
      });
      // the text of the tables (what screen readers read and a selection copies): the first
      // frame after S[1,1]'s text changed (on screen; S[1,1] = q1·k1 changes with W_q[1,1])
      const textShown = new Promise((resolve) => {
        const mo = new MutationObserver(() => {
          if (qCell().textContent === before) return;
          mo.disconnect();
          resolve(frameTimes());
        });
        mo.observe(steps, { subtree: true, childList: true, characterData: true });
      });
      input.value = value;
      const f0 = phase === 'raf' ? frameNo - 1 : frameNo; // the frame after the edit is f0 + 1
      if (counting) performance.mark('aps-edit');
      const t0 = performance.now();
      input.dispatchEvent(new Event('input', { bubbles: true }));
      const [t1, t2, f1] = await painted;
      const [t3, , f3] = await textShown;
      off();
      if (q00 === null || q00 === lastQ) throw new Error(`edit ${i} did not change the trace`);
      lastQ = q00;
      // the core alone on the spec the component just traced (same matrices, same options)
      const s = ctl.getState();
      const spec = { ...s.options, x: s.matrices.x, W_q: s.matrices.W_q, W_k: s.matrices.W_k, W_v: s.matrices.W_v, W_o: s.matrices.W_o };
      const c0 = performance.now();
      const tr = core.trace(spec);
      const c1 = performance.now();
      if (tr.T !== SIZE) throw new Error('core trace has the wrong shape');
      const status = /([\d.]+)\s*ms/.exec(document.querySelector('.aps-status')?.textContent ?? '');
      if (i >= 3) {
        rows.rendered.push(t1 - t0);
        rows.nextRaf.push(t2 - t0);
        rows.text.push(t3 - t0);
        rows.frames.push(f1 - f0);
        rows.textFrames.push(f3 - f0);
        rows.trace.push(tTrace - t0);
        rows.core.push(c1 - c0);
        if (status) rows.status.push(Number(status[1]));
      }
      // the next edit comes 30 + 0…16 ms after a frame: a user's keystroke lands anywhere in the
      // 16.7 ms between two frames, so the edits are spread evenly over that interval
      await raf();
      await idle(30 + ((i * 7) % 17));
    }
    await idle(100);
    looping = false;
    loaf.disconnect();
    // what is on screen: the panels whose numbers were visible in the window during the edits
    const onScreen = [...document.querySelectorAll('figure[data-panel]')].filter((f) => {
      const r = f.getBoundingClientRect();
      return !f.hidden && r.bottom > 0 && r.top < innerHeight && r.right > 0 && r.left < innerWidth;
    }).map((f) => f.dataset.panel);
    const shownQ = qCell()?.textContent;
    // the core in a Worker: post the spec, get the trace back (structured clone), against the
    // same call on the main thread, alternating
    const worker = new Worker('/__bench_worker.mjs', { type: 'module' });
    await new Promise((resolve, reject) => { worker.onmessage = (e) => e.data === 'ready' && resolve(); worker.onerror = reject; });
    const st = ctl.getState();
    const wspec = { ...st.options, x: st.matrices.x, W_q: st.matrices.W_q, W_k: st.matrices.W_k, W_v: st.matrices.W_v, W_o: st.matrices.W_o };
    rows.workerRound = [];
    rows.workerCore = [];
    rows.workerMain = [];
    rows.mainCore = [];
    for (let i = 0; i < 33; i++) {
      const t0 = performance.now();
      const got = await new Promise((resolve) => { worker.onmessage = (e) => { const t = performance.now(); resolve([e.data, t]); }; worker.postMessage(wspec); });
      const t1 = got[1];
      // the main thread's share: receiving the message (deserialising the trace) is inside t1 − t0,
      // measured apart by timing a structured clone of the same trace
      const c0 = performance.now();
      structuredClone(got[0].trace);
      const c1 = performance.now();
      const m0 = performance.now();
      core.trace(wspec);
      const m1 = performance.now();
      if (i >= 3) {
        rows.workerRound.push(t1 - t0);
        rows.workerCore.push(got[0].ms);
        rows.workerMain.push(c1 - c0);
        rows.mainCore.push(m1 - m0);
      }
      await idle(5);
    }
    worker.terminate();
    return { rows, onScreen, shownQ, lastQ };
  }, { N, SIZE });
  await hooks.after?.();
  return result;
}

/**
 * Where the renderer's main thread spent its time during the edits, from a Chromium trace: self
 * time per trace event (an event's duration minus its children's), per edit, grouped.
 */
function profileOf(traceJson, edits) {
  const events = JSON.parse(traceJson).traceEvents ?? traceJson.traceEvents;
  const mainThreads = new Set(events.filter((e) => e.ph === 'M' && e.name === 'thread_name' && e.args?.name === 'CrRendererMain').map((e) => `${e.pid}:${e.tid}`));
  const byThread = new Map();
  const open = new Map();
  const marks = { 'aps-edit': [], 'aps-frame': [] };
  for (const e of events) {
    if (marks[e.name] && e.cat?.includes('user_timing')) { marks[e.name].push(e.ts); continue; }
    const key = `${e.pid}:${e.tid}`;
    if (!mainThreads.has(key)) continue;
    if (!CANVAS_EVENTS.has(e.name) && !(e.cat ?? '').split(',').some((c) => TIMELINE.has(c))) continue; // 'blink' was asked for these alone
    let x = null;
    if (e.ph === 'X' && e.dur !== undefined) x = { name: e.name, ts: e.ts, end: e.ts + e.dur, cpu: e.tdur ?? e.dur };
    else if (e.ph === 'B') { if (!open.has(key)) open.set(key, []); open.get(key).push(e); }
    else if (e.ph === 'E') { const b = open.get(key)?.pop(); if (b) x = { name: b.name, ts: b.ts, end: e.ts, cpu: b.tts !== undefined && e.tts !== undefined ? e.tts - b.tts : e.ts - b.ts }; }
    if (!x) continue;
    if (!byThread.has(key)) byThread.set(key, []);
    byThread.get(key).push(x);
  }
  for (const list of byThread.values()) list.sort((a, b) => a.ts - b.ts || b.end - a.end);
  /**
   * Self time per event name of the events within [from, to] (clipped to it): wall time, or with
   * cpu the thread's CPU time (the trace's tdur: what other processes' load does not inflate; a
   * clipped event counts its CPU time in proportion).
   */
  const selfTimes = (from = -Infinity, to = Infinity, cpu = false) => {
    const self = new Map();
    for (const all of byThread.values()) {
      const list = [];
      for (const e of all) {
        if (e.end <= from || e.ts >= to) continue;
        const ts = Math.max(e.ts, from);
        const end = Math.min(e.end, to);
        const share = e.end > e.ts ? (end - ts) / (e.end - e.ts) : 1;
        list.push({ name: e.name, ts, end, d: cpu ? e.cpu * share : end - ts });
      }
      const stack = [];
      for (const x of list) {
        while (stack.length && stack[stack.length - 1].end <= x.ts) stack.pop();
        x.self = x.d;
        if (stack.length) stack[stack.length - 1].self -= x.d;
        stack.push(x);
      }
      for (const x of list) self.set(x.name, (self.get(x.name) ?? 0) + Math.max(0, x.self));
    }
    return self;
  };
  const groups = {
    'script (JS, wasm, GC)': ['FunctionCall', 'FireAnimationFrame', 'EventDispatch', 'TimerFire', 'RunMicrotasks', 'V8.Execute', 'v8.run', 'V8.GC_SCAVENGER', 'MinorGC', 'MajorGC', 'v8.callFunction', 'FireIdleCallback', 'BlinkGC.AtomicPhase', 'V8.GCScavenger', 'v8.compile', 'EvaluateScript', 'HandlePostMessage'],
    'style (recalc)': ['UpdateLayoutTree', 'RecalculateStyles', 'ParseAuthorStyleSheet'],
    'layout': ['Layout', 'UpdateLayerTree'],
    'pre-paint, paint, layerize, commit': ['PrePaint', 'Paint', 'PaintImage', 'Layerize', 'Commit', 'UpdateLayer', 'CompositeLayers', 'PaintNonDefaultBackgroundColor'],
    // the canvases' drawing, recorded by fillText & co. in script, is rasterised here (in software
    // with --disable-gpu: on the main thread, when the frame takes the canvas)
    'canvas raster (at the frame)': [...CANVAS_EVENTS],
  };
  const summary = (self, n) => {
    const per = (us) => us / 1000 / n;
    const out = [];
    let grouped = 0;
    for (const [g, names] of Object.entries(groups)) {
      const v = names.reduce((a, k) => a + (self.get(k) ?? 0), 0);
      grouped += v;
      out.push([g, per(v)]);
    }
    const total = [...self.values()].reduce((a, b) => a + b, 0);
    out.push(['other', per(total - grouped)]);
    const top = [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, 12).map(([k, v]) => [k, per(v)]);
    return { groups: out, top, total: per(total) };
  };
  const all = summary(selfTimes(), edits);
  all.cpu = summary(selfTimes(-Infinity, Infinity, true), edits);
  // the critical path: from each edit's input event to the end of the frame holding its numbers
  const windows = marks['aps-edit'].map((from, i) => [from, marks['aps-frame'][i]]).filter(([a, b]) => b > a);
  let critical = null;
  if (windows.length) {
    const self = new Map();
    const selfCpu = new Map();
    let span = 0;
    for (const [a, b] of windows) {
      span += b - a;
      for (const [k, v] of selfTimes(a, b)) self.set(k, (self.get(k) ?? 0) + v);
      for (const [k, v] of selfTimes(a, b, true)) selfCpu.set(k, (selfCpu.get(k) ?? 0) + v);
    }
    critical = summary(self, windows.length);
    critical.cpu = summary(selfCpu, windows.length);
    critical.span = span / 1000 / windows.length;
  }
  return { ...all, critical };
}

/**
 * The trace's categories: the DevTools timeline's, the user-timing marks, and 'blink' for the
 * canvases' raster at the frame (only CANVAS_EVENTS of it are kept: the rest would move self time
 * out of the timeline's events and change the groups' meaning).
 */
const TIMELINE = new Set(['devtools.timeline', 'disabled-by-default-devtools.timeline', 'blink.user_timing']);
const TRACE_CATEGORIES = [...TIMELINE, 'blink'];
const CANVAS_EVENTS = new Set(['CanvasRenderingContext2D::FinalizeFrame', 'Canvas2DResourceProvider::ProduceCanvasResource']);

/**
 * Edit → frame rendered on one example: N edits (3 more to warm up) of its grid's first cell, each
 * timed from the input event to the end of the first frame after the component's 'trace' (the
 * frame holding the new numbers; the rAF-loop marks of measureEdits, in short). Returns the ms.
 */
async function measureExample(page, url, id, grid) {
  await page.goto(`${url}/index.html`);
  await page.waitForFunction(() => window.attentionStepper, null, { timeout: 30_000 });
  await page.locator('select[data-key="preset"]').selectOption(id);
  await page.locator(`[data-matrix="${grid}"] td[data-r="0"][data-c="0"]`).dblclick();
  await page.locator(`[data-matrix="${grid}"] input.aps-cell-input`).waitFor();
  await page.waitForTimeout(300);
  return page.evaluate(async ({ N, grid }) => {
    const ctl = window.attentionStepper;
    const input = document.querySelector(`[data-matrix="${grid}"] input.aps-cell-input`);
    const raf = () => new Promise((r) => requestAnimationFrame(r));
    const idle = (t) => new Promise((r) => setTimeout(r, t));
    let phase = 'idle';
    let afterRender = [];
    const channel = new MessageChannel();
    channel.port1.onmessage = () => { phase = 'idle'; const now = performance.now(); const due = afterRender; afterRender = []; for (const f of due) f(now); };
    let looping = true;
    const loop = () => requestAnimationFrame(() => { phase = 'raf'; channel.port2.postMessage(0); if (looping) loop(); });
    loop();
    await raf();
    const rendered = () => new Promise((resolve) => {
      if (phase === 'raf') afterRender.push(resolve); else requestAnimationFrame(() => afterRender.push(resolve));
    });
    const out = [];
    for (let i = 0; i < N + 3; i++) {
      const shown = new Promise((resolve) => { const off = ctl.on('trace', () => { off(); resolve(rendered()); }); });
      input.value = (0.5 + ((i % 40) + 1) * 0.0125).toFixed(4);
      const t0 = performance.now();
      input.dispatchEvent(new Event('input', { bubbles: true }));
      const t1 = await shown;
      if (i >= 3) out.push(t1 - t0);
      await raf();
      await idle(30 + ((i * 7) % 17));
    }
    looping = false;
    return out;
  }, { N, grid });
}

async function variantsTable(browser, url) {
  const page = await browser.newPage({ viewport: { width: WIDTH, height: 1000 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  console.log(`\nThe modern variants' examples — ${N} edits of one cell each, edit → frame rendered (ms)`);
  console.log(`${'example'.padEnd(16)}${'grid'.padEnd(6)}${'median'.padStart(8)}${'p90'.padStart(8)}${'min'.padStart(8)}${'max'.padStart(8)}`);
  for (const [id, grid] of VARIANT_EXAMPLES) {
    const xs = await measureExample(page, url, id, grid);
    console.log(`${id.padEnd(16)}${grid.padEnd(6)}${ms(quantile(xs, 0.5))}${ms(quantile(xs, 0.9))}${ms(Math.min(...xs))}${ms(Math.max(...xs))}`);
  }
  await page.close();
  if (errors.length) console.warn(`page errors: ${errors.join('; ')}`);
}

async function main({ browser, url }) {
  if (VARIANTS) await variantsTable(browser, url);
  const page = await browser.newPage({ viewport: { width: WIDTH, height: 1000 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  let trace = null;
  let cdp = null;
  let cpu = null;
  const hooks = PROFILE ? {
    before: () => browser.startTracing(page, { categories: TRACE_CATEGORIES }),
    after: async () => { trace = await browser.stopTracing(); if (process.env.AP_TRACE_OUT) (await import('node:fs')).writeFileSync(process.env.AP_TRACE_OUT, trace); },
  } : CPU_PROFILE ? {
    before: async () => {
      cdp = await page.context().newCDPSession(page);
      await cdp.send('Profiler.enable');
      await cdp.send('Profiler.setSamplingInterval', { interval: 100 });
      await cdp.send('Profiler.start');
    },
    after: async () => { cpu = (await cdp.send('Profiler.stop')).profile; },
  } : {};
  const res = await measureEdits(page, url, hooks);
  const r = res.rows;
  await page.close();
  if (errors.length) console.warn(`page errors: ${errors.join('; ')}`);

  console.log(`\nAttention stepper — ${N} edits of one cell of W_q, x and weights ${SIZE} × ${SIZE}, ${HEADS} heads, causal, W_o ${SIZE} × ${SIZE}`);
  console.log(`Chromium ${browser.version()}, headless, window ${WIDTH} × 1000, page from ${WEB}/; ms, median and p90 (3 warm-up edits not counted)`);
  console.log(`Panels on screen while editing W_q: ${res.onScreen.join(', ') || 'none'}\n`);
  if (!res.onScreen.includes('scores')) console.warn('(the scores panel was not on screen: the figures below may not include painting what changed)');
  const line = (name, xs, note) => console.log(`${name.padEnd(34)}${ms(quantile(xs, 0.5))}${ms(quantile(xs, 0.9))}${ms(Math.min(...xs))}${ms(Math.max(...xs))}   ${note}`);
  console.log(`${'measure'.padEnd(34)}${'median'.padStart(8)}${'p90'.padStart(8)}${'min'.padStart(8)}${'max'.padStart(8)}`);
  console.log('-'.repeat(34 + 32));
  line('edit → frame rendered', r.rendered, 'input event → main thread done with the first frame holding the new numbers');
  line('edit → next frame\'s rAF (old)', r.nextRaf, 'the first measure (before the canvas repaint): + up to one frame interval');
  line('edit → text of the tables', r.text, 'input event → the frame after S[1,1]\'s text (screen readers, selection) changed');
  const frames = (xs) => {
    const n = new Map();
    for (const x of xs) n.set(x, (n.get(x) ?? 0) + 1);
    return [...n.entries()].sort((a, b) => a[0] - b[0]).map(([k, c]) => `${k}: ${c}`).join(', ');
  };
  console.log(`${'  in frames after the edit'.padEnd(34)}numbers ${frames(r.frames)}; text ${frames(r.textFrames)} (1 = the first frame after the edit)`);
  const within2 = r.textFrames.filter((f) => f <= 2).length;
  console.log(`${'  text within two frames'.padEnd(34)}${within2} of ${r.textFrames.length} edits (${(100 * within2 / r.textFrames.length).toFixed(0)}%)`);
  line('edit → trace event', r.trace, 'input event → the component\'s \'trace\' (frame wait + core + DOM)');
  line('core trace alone (wasm + JSON)', r.core, 'api.trace on the same spec, second core instance');
  if (r.status.length) line('component compute (its status)', r.status, 'the time the page itself reports (core + DOM update)');
  line('core in a Worker: round trip', r.workerRound, 'post spec → trace back (structured clone); 30 calls, alternating with:');
  line('core on the main thread', r.mainCore, '  the same api.trace on the main thread');
  line('  worker: the trace call there', r.workerCore, '  api.trace inside the worker');
  line('  main thread: receiving it', r.workerMain, '  a structured clone of the trace (what receiving it costs here)');
  if (r.loafRender.length) {
    line('long frame: scripts', r.loafScript, `${r.loafRender.length} frames over 50 ms during the ${N} edits (Long Animation Frames API)`);
    line('long frame: style, layout, paint', r.loafRender, 'from the frame\'s renderStart to its end');
  }

  if (cpu) {
    // self time per function (the V8 sampling profiler, 0.1 ms), ms per edit
    const byId = new Map(cpu.nodes.map((n) => [n.id, n]));
    const parent = new Map();
    for (const n of cpu.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
    const name = (n) => `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.split('/').pop()}:${n.callFrame.lineNumber + 1}`;
    const self = new Map();
    const incl = new Map();
    const dt = cpu.timeDeltas;
    cpu.samples.forEach((id, i) => {
      const d = (dt[i + 1] ?? 0) / 1000;
      const key = name(byId.get(id));
      self.set(key, (self.get(key) ?? 0) + d);
      const seen = new Set();
      for (let n = id; n !== undefined; n = parent.get(n)) {
        const k = name(byId.get(n));
        if (!seen.has(k)) { seen.add(k); incl.set(k, (incl.get(k) ?? 0) + d); }
      }
    });
    console.log(`\nJS inclusive time during the edits (V8 sampling profiler), ms per edit:`);
    for (const [k, v] of [...incl.entries()].filter(([k]) => !k.startsWith('(')).sort((a, b) => b[1] - a[1]).slice(0, 40)) console.log(`  ${k.padEnd(60)}${(v / (N + 3)).toFixed(2).padStart(8)}`);
    console.log(`\nJS self time during the edits (V8 sampling profiler), ms per edit:`);
    for (const [k, v] of [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, 30)) console.log(`  ${k.padEnd(60)}${(v / (N + 3)).toFixed(2).padStart(8)}`);
  }
  if (trace) {
    const prof = profileOf(trace.toString('utf8'), N + 3);
    const table = (p) => {
      const cpuOf = new Map([...p.cpu.groups, ...p.cpu.top]);
      console.log(`  ${''.padEnd(40)}${'wall'.padStart(8)}${'CPU'.padStart(8)}`);
      for (const [g, v] of p.groups) console.log(`  ${g.padEnd(40)}${v.toFixed(2).padStart(8)}${(cpuOf.get(g) ?? 0).toFixed(2).padStart(8)}`);
      console.log('  largest trace events (by wall time):');
      for (const [n, v] of p.top) console.log(`    ${n.padEnd(38)}${v.toFixed(2).padStart(8)}${cpuOf.has(n) ? cpuOf.get(n).toFixed(2).padStart(8) : ''}`);
    };
    console.log(`\nMain thread during the edits (a Chromium trace; self time, ms per edit; total ${prof.total.toFixed(2)} wall, ${prof.cpu.total.toFixed(2)} CPU)`);
    table(prof);
    const c = prof.critical;
    if (c) {
      console.log(`\nMain thread from the input event to the end of the frame with the new numbers (mean per edit ${c.span.toFixed(2)} ms; busy ${c.total.toFixed(2)} wall, ${c.cpu.total.toFixed(2)} CPU)`);
      table(c);
    }
  }
  if (process.argv.includes('--no-size')) return;
  console.log('\nTransfer size: every file the page loads, gzip -9');
  const pages = [['playground', '/index.html'], ['embed', '/embed.html#preset=identity'], ['course example', '/examples/']];
  const all = new Map();
  const totals = [];
  for (const [name, path] of pages) {
    const context = await browser.newContext();
    const files = await transfer(context, url, path);
    await context.close();
    let raw = 0; let gz = 0;
    for (const [u, f] of files) { raw += f.raw; gz += f.gz; all.set(u, f); }
    totals.push([name, path, files.size, raw, gz]);
  }
  console.log(`${'page'.padEnd(16)}${'path'.padEnd(30)}${'files'.padStart(6)}${'raw kB'.padStart(10)}${'gzip kB'.padStart(10)}`);
  console.log('-'.repeat(72));
  for (const [name, path, n, raw, gz] of totals) console.log(`${name.padEnd(16)}${path.padEnd(30)}${String(n).padStart(6)}${(raw / 1024).toFixed(1).padStart(10)}${(gz / 1024).toFixed(1).padStart(10)}`);
  console.log('\nLargest files (gzip -9):');
  const byGz = [...all.entries()].sort((a, b) => b[1].gz - a[1].gz).slice(0, 8);
  for (const [u, f] of byGz) console.log(`  ${new URL(u).pathname.padEnd(34)}${(f.raw / 1024).toFixed(1).padStart(8)} kB raw${(f.gz / 1024).toFixed(1).padStart(8)} kB gzip`);
  console.log('');
}

/** One run on one copy of web/ for the comparison: the edits' rows, and the CPU profile with --profile. */
async function oneRun(browser, url) {
  const page = await browser.newPage({ viewport: { width: WIDTH, height: 1000 } });
  let trace = null;
  const hooks = PROFILE ? {
    before: () => browser.startTracing(page, { categories: TRACE_CATEGORIES }),
    after: async () => { trace = await browser.stopTracing(); },
  } : {};
  const res = await measureEdits(page, url, hooks);
  await page.close();
  return { rows: res.rows, prof: trace ? profileOf(trace.toString('utf8'), N + 3) : null };
}

/** --against: A (--web) and B (--against) served side by side, rounds interleaved (A B, B A, …). */
async function compare({ browser, url }) {
  const other = await startServer(AGAINST);
  const median = (xs) => quantile(xs, 0.5);
  const runs = { A: [], B: [] };
  try {
    const { execSync } = await import('node:child_process');
    const load = () => { try { return execSync('cat /proc/loadavg').toString().split(' ')[0]; } catch { return '?'; } };
    console.log(`\nAttention stepper, A = ${WEB}/ against B = ${AGAINST}/, ${ROUNDS} rounds interleaved, ${N} edits each (16 × 16, 4 heads); Chromium ${browser.version()}, window ${WIDTH} × 1000; ms`);
    console.log(`${'round'.padEnd(10)}${'load'.padStart(6)}${'frame med'.padStart(11)}${'p90'.padStart(8)}${'text med'.padStart(10)}${'p90'.padStart(8)}${'≤2 frames'.padStart(11)}${PROFILE ? `${'CPU path'.padStart(10)}${'script'.padStart(8)}${'render'.padStart(8)}` : ''}`);
    for (let k = 0; k < ROUNDS; k++) {
      for (const side of k % 2 ? ['B', 'A'] : ['A', 'B']) {
        const l0 = load();
        const r = await oneRun(browser, side === 'A' ? url : other.url);
        runs[side].push(r);
        const w = r.rows;
        const within = w.textFrames.filter((f) => f <= 2).length / w.textFrames.length;
        let extra = '';
        if (r.prof?.critical) {
          const c = r.prof.critical.cpu;
          const g = new Map(c.groups);
          const render = ['style (recalc)', 'layout', 'pre-paint, paint, layerize, commit'].reduce((a, x) => a + g.get(x), 0);
          extra = `${ms(c.total).padStart(10)}${ms(g.get('script (JS, wasm, GC)'))}${ms(render)}`;
        }
        console.log(`${`${k + 1} ${side}`.padEnd(10)}${String(l0).padStart(6)}${ms(median(w.rendered)).padStart(11)}${ms(quantile(w.rendered, 0.9))}${ms(median(w.text)).padStart(10)}${ms(quantile(w.text, 0.9))}${`${(100 * within).toFixed(0)}%`.padStart(11)}${extra}`);
      }
    }
    const summary = (side, f) => median(runs[side].map(f));
    const rows = [
      ['edit → frame, median', (r) => median(r.rows.rendered)],
      ['edit → frame, p90', (r) => quantile(r.rows.rendered, 0.9)],
      ['edit → text, median', (r) => median(r.rows.text)],
      ['edit → text, p90', (r) => quantile(r.rows.text, 0.9)],
      ['core alone, median', (r) => median(r.rows.core)],
    ];
    if (PROFILE) {
      rows.push(['critical path CPU', (r) => r.prof?.critical?.cpu.total ?? NaN]);
      rows.push(['  of it script CPU', (r) => new Map(r.prof?.critical?.cpu.groups ?? []).get('script (JS, wasm, GC)') ?? NaN]);
    }
    console.log(`\nmedian over the rounds${'A'.padStart(16)}${'B'.padStart(9)}${'A / B'.padStart(9)}`);
    for (const [name, f] of rows) {
      const a = summary('A', f);
      const b = summary('B', f);
      console.log(`${name.padEnd(30)}${ms(a)}${' '.repeat(1)}${ms(b)}${(a / b).toFixed(2).padStart(9)}`);
    }
  } finally {
    await other.stop();
  }
}

runPageBench(WEB, AGAINST ? compare : main);

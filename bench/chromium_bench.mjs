// chromium_bench.mjs — the core's benchmark (bench/bench_core.cpp built for the web:
// build-wasm/ap_bench_web.js) in Debian's Chromium, where users run the core. A benchmark: it prints
// the same lines as ap_bench natively and in Node, and never fails on a number.
// Chromium compiles wasm with Liftoff first and tiers hot functions up to TurboFan, so it runs the
// whole benchmark once quickly (--quick) to warm up, then the measured run.
//   node bench/chromium_bench.mjs [--gpt] [ap_bench arguments…]   (CHROMIUM_PATH, default /usr/bin/chromium)
// --gpt runs W3/W4 (bench/bench_gpt.cpp: build-wasm/ap_bench_gpt_web.js) instead of W1/W2.
// With --gpt and w9 asked for (--only w9, or every workload), W9's sweep also runs the page's
// way, on GPT-2 small's shape over the page's workers (bench/patch_bench.mjs: W9w), after the
// single-thread lines.
import { chromium } from 'playwright-core';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { LAUNCH, runPageBench } from './web_server.mjs';

const gpt = process.argv[2] === '--gpt';
const JS = fileURLToPath(new URL(`../build-wasm/${gpt ? 'ap_bench_gpt_web' : 'ap_bench_web'}.js`, import.meta.url));
const args = process.argv.slice(gpt ? 3 : 2);

let source;
try {
  source = await readFile(JS, 'utf8');
} catch {
  console.error(`chromium_bench: ${JS} is missing (cmake --build build-wasm --target ap_bench_web ap_bench_gpt_web)`);
  process.exit(1);
}
const browser = await chromium.launch(LAUNCH);
try {
  const page = await browser.newPage();
  await page.goto('about:blank');
  await page.addScriptTag({ content: source });
  const version = browser.version();
  const lines = await page.evaluate(async (argv) => {
    const out = [];
    // eslint-disable-next-line no-undef
    const M = await createApBench({ print: (s) => out.push(s), printErr: (s) => out.push(s) });
    M.callMain(['--quick']);  // warm-up: every kernel runs hot enough to be tiered up
    out.length = 0;
    M.callMain(argv);
    return out;
  }, args);
  for (const line of lines) console.log(line.replace(/^(ap_bench\w*): /, `$1 (Chromium ${version}): `));
} finally {
  await browser.close();
}

// W9w — the patching sweep the page's way, on a model of GPT-2 small's exact shape opened as a
// learner opens one, over the page's workers: bench/patch_bench.mjs (its lines; 1 and 2 workers).
const wantsW9 = gpt && (!args.includes('--only') || args[args.indexOf('--only') + 1]?.split(',').includes('w9'));
if (wantsW9 && !args.includes('--quick')) {
  const { w9w } = await import('./patch_bench.mjs');
  await w9w({ log: (line) => console.log(`ap_bench_gpt (Chromium, page workers): ${line}`) });
}

#!/usr/bin/env node
// next_token_bench.mjs — how fast the training page's next-token panel answers a slider, in
// Chromium. A benchmark, not a test: it prints numbers and never fails on them.
//
//   node bench/next_token_bench.mjs [--changes 200]
//
// What it does: serves web/, opens the training page, trains the tiny preset on the copy task for
// a few steps (the weights do not matter, only the time), then moves the temperature slider
// through --changes positions (0.05 … 3, in top-k mode) and then the top-p slider (0.05 … 0.99), one
// position at a time: each is the time from the slider's input event to the facts line showing
// the core's answer for that position (the request to the worker, the core's
// next_token_distribution over the kept logits, the JSON, the message back, the bars drawn).
// Prints the median, the 90th percentile and the largest, against a 60 Hz frame (16.7 ms). Also
// the page's transfer size (every file it and its worker load, gzip -9), the figure the page
// must keep under 350 kB.
//
// The 50,257-token vocabulary is GPT-2's; the page's models have at most 8,192 characters, so the
// core's share of the answer at that size is measured by bench_gpt.cpp's W5 (natively, and in wasm:
// node build-wasm/ap_bench_gpt.cjs --only w5).
import { runPageBench, transfer } from './web_server.mjs';

const arg = (name, dflt) => { const i = process.argv.indexOf(`--${name}`); return i > 0 ? Number(process.argv[i + 1]) : dflt; };
const CHANGES = arg('changes', 200);

/** In the page: moves a slider through `values`, each time waiting for the facts line to show `expect(v)`. */
async function sweep(page, sliderId, values, expectText) {
  return page.evaluate(async ({ sliderId, values, expectText }) => {
    const input = document.getElementById(sliderId);
    const facts = document.getElementById('tr-next-facts');
    const times = [];
    for (const v of values) {
      const want = expectText.replace('{v}', String(v));
      const t0 = performance.now();
      input.value = String(v);
      input.dispatchEvent(new Event('input', { bubbles: true }));
      await new Promise((resolve) => {
        const done = () => facts.textContent.endsWith(want) || facts.textContent.includes(`${want})`);
        if (done()) { resolve(); return; }
        const obs = new MutationObserver(() => { if (done()) { obs.disconnect(); resolve(); } });
        obs.observe(facts, { childList: true, characterData: true, subtree: true });
      });
      times.push(performance.now() - t0);
    }
    return times;
  }, { sliderId, values, expectText });
}

function report(name, times) {
  const s = [...times].sort((a, b) => a - b);
  const q = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  console.log(`  ${name.padEnd(44)} median ${q(0.5).toFixed(2).padStart(6)} ms   p90 ${q(0.9).toFixed(2).padStart(6)} ms   max ${s[s.length - 1].toFixed(2).padStart(6)} ms   (${s.length} changes; a 60 Hz frame is 16.7 ms)`);
}

async function main({ browser, url }) {
  const context = await browser.newContext({ viewport: { width: 1366, height: 900 } });
  console.log(`\nThe next-token panel — Chromium ${browser.version()}, headless`);
  const files = await transfer(context, url, '/train/', { ready: (p) => p.waitForFunction(() => document.getElementById('app').dataset.status === 'ready', null, { timeout: 600_000 }), settleMs: 500 });
  let gz = 0;
  for (const f of files.values()) gz += f.gz;
  console.log(`  training page transfer size (gzip -9, ${files.size} files)      ${(gz / 1024).toFixed(1)} kB`);

  const page = await context.newPage();
  await page.goto(`${url}/train/#steps=10&batch_size=4&sample_every=0&next_prompt=abc%3D`);
  await page.waitForFunction(() => document.getElementById('app').dataset.status === 'ready', null, { timeout: 600_000 });
  await page.locator('#tr-start').click();
  await page.waitForFunction(() => /done|diverged/.test(document.getElementById('app').dataset.train), null, { timeout: 3_600_000 });
  await page.waitForFunction(() => document.querySelectorAll('#tr-next tbody tr').length > 0, null, { timeout: 600_000 });
  const half = Math.max(2, Math.floor(CHANGES / 2));
  // slider positions as the slider's step makes them (0.05 steps; 0.01 for p), each different from the last
  const temps = [];
  for (let i = 0; i < half; i++) temps.push(Number((0.05 + 0.05 * (i % 60)).toFixed(2)));
  const ps = [];
  for (let i = 0; i < half; i++) ps.push(Number((0.05 + 0.01 * (i % 95)).toFixed(2))); // up to 0.99: at 1 nothing is cut
  console.log(`\nControl → answer (the tiny model, 12 tokens, in the page: worker, core, bars), ${new Date().toISOString()}`);
  report('temperature slider, top-k 5', await sweep(page, 'tr-next-temperature', temps, 'temperature {v}'));
  await page.getByRole('radio', { name: 'the top p' }).click();
  report('top-p slider', await sweep(page, 'tr-next-top_p', ps, 'top-p {v}'));
  await page.close();
  console.log('');
}

runPageBench('web', main);

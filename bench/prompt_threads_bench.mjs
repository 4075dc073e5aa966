// prompt_threads_bench.mjs — W6's prompt forward on 1 and 2 wasm threads in Chromium (issue 37's
// target: 2 threads ≥ 1.6× one): chromium_bench.mjs --prompt-threads [N]. A model of GPT-2 small's
// shape (12 layers, n_embd 768, 12 heads, vocabulary 50,257; seeded random weights, written as a
// Hugging Face model.safetensors + config.json as bench/open_bench.mjs writes it, once, under the
// system's temporary folder) is opened through gpt.js on the cross-origin isolated page
// (/isolated/train/: gpt_core_mt, loadGpt({threads: 2})), then a 64-token prompt's next-token
// forward (run.nextToken: the prompt's forward and its last logits) is timed on 1 and 2 threads,
// alternated for N rounds (default 5) after one warm-up each. Prints the medians, their ratio and
// whether the logits shown (the 8,192 largest, float32 printed to round-trip) are the same bits,
// then each round's two times and ratio (a 2-vCPU machine's swings show there: a few slow rounds
// or all of them).
// A benchmark: it never fails on a number. Limits: the model is opened and run on the page's main
// thread (not the training page's worker); tokens are ids (no tokenizer files).
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runPageBench } from './web_server.mjs';
import { hfGpt2Files } from '../tests/lib/foreign-files.mjs';

const CFG = { n_layer: 12, n_head: 12, n_embd: 768, block_size: 1024, vocab_size: 50257 };
const PROMPT_TOKENS = 64;

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

export async function promptThreadsBench(rounds = 5) {
  const dir = join(tmpdir(), 'ap-prompt-threads');
  const modelPath = join(dir, 'model.safetensors');
  const configPath = join(dir, 'config.json');
  if (!existsSync(modelPath) || !existsSync(configPath)) {
    mkdirSync(dir, { recursive: true });
    const { model, config } = hfGpt2Files(CFG, 1);
    writeFileSync(modelPath, model);
    writeFileSync(configPath, config);
  }
  await runPageBench('web', async ({ browser, url }) => {
    const page = await browser.newPage();
    await page.goto(`${url}/isolated/train/`);
    // the files as a picker gives them (Playwright streams a large file into the input)
    await page.evaluate(() => {
      const input = Object.assign(document.createElement('input'), { type: 'file', multiple: true, id: 'ap-bench-files' });
      document.body.append(input);
    });
    await page.locator('#ap-bench-files').setInputFiles([modelPath, configPath]);
    const prompt = Array.from({ length: PROMPT_TOKENS }, (_, i) => `[${(i * 7919 + 11) % CFG.vocab_size}]`).join('');
    const r = await page.evaluate(async ({ rounds, prompt }) => {
      if (!globalThis.crossOriginIsolated) throw new Error('the page is not cross-origin isolated');
      const { loadGpt } = await import('/isolated/gpt.js');
      const gpt = await loadGpt({ threads: 2 });
      const run = await gpt.openModel([...document.getElementById('ap-bench-files').files]);
      const spec = { prompt, show: 8192 };
      const timed = (n) => {
        run.setThreads(n);
        const t0 = performance.now();
        const answer = run.nextToken(spec);
        return { ms: performance.now() - t0, top: JSON.stringify(answer.top), tokens: answer.tokens.length };
      };
      const first = { 1: timed(1), 2: timed(2) };  // warm-up (and the logits compared)
      const ms = { 1: [], 2: [] };
      for (let i = 0; i < rounds; i++) for (const n of [1, 2]) ms[n].push(timed(n).ms);
      return { ms, same: first[1].top === first[2].top, tokens: first[1].tokens, cores: navigator.hardwareConcurrency };
    }, { rounds, prompt });
    const m1 = median(r.ms[1]), m2 = median(r.ms[2]);
    console.log(`W6_gpt2s_prefill64 in Chromium ${browser.version()} (gpt_core_mt, ${r.tokens} tokens, ${rounds} rounds alternated, ${r.cores} cores): `
      + `1 thread ms_med=${m1.toFixed(1)}  2 threads ms_med=${m2.toFixed(1)}  ratio=${(m1 / m2).toFixed(2)}  `
      + `logits same bits: ${r.same ? 'yes' : 'NO'}`);
    const each = r.ms[1].map((t1, i) => `${t1.toFixed(1)}/${r.ms[2][i].toFixed(1)}=${(t1 / r.ms[2][i]).toFixed(2)}`);
    console.log(`  rounds (1 thread/2 threads=ratio, ms): ${each.join('  ')}`);
  });
}

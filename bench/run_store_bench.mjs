#!/usr/bin/env node
// run_store_bench.mjs — where the training page keeps a run's checkpoint bytes: IndexedDB (what
// web/train/run-store.js does: the run's record and its checkpoint in one transaction) against
// OPFS (the Origin Private File System: a file per checkpoint through createWritable, plus the
// record in IndexedDB, two separate writes). A benchmark, not a test: it prints numbers and never
// fails on them.
//
//   node bench/run_store_bench.mjs                   # 1.2 MB (the tiny preset's checkpoint) and 12 MB, 15 rounds
//   node bench/run_store_bench.mjs --rounds 30
//
// In Chromium (Debian's), in the training page's origin, on the page's thread (where the store
// runs): for each size, the median wall time of keeping a checkpoint (write, committed or closed)
// and of reading it back (the bytes in a Uint8Array), IndexedDB through run-store.js itself, OPFS
// through the standard API. Wall time of storage: it depends on the disk and on what else the
// machine runs; compare the two in the same sitting, as printed, and say the load.
import { runPageBench } from './web_server.mjs';

const arg = (name, dflt) => { const i = process.argv.indexOf(`--${name}`); return i > 0 ? Number(process.argv[i + 1]) : dflt; };
const ROUNDS = arg('rounds', 15);
const SIZES = [1_271_000, 12_710_000]; // the tiny preset's checkpoint with AdamW's state (~1.2 MB), and ten times it

async function measure(page, size, rounds) {
  return page.evaluate(async ({ size, rounds }) => {
    const { openRunStore } = await import('/train/run-store.js');
    const store = await openRunStore({ name: 'run-store-bench' });
    const root = await navigator.storage.getDirectory();
    const bytes = new Uint8Array(size);
    for (let i = 0; i < size; i += 65536) crypto.getRandomValues(bytes.subarray(i, Math.min(size, i + 65536)));
    const meta = (id) => ({ id, created: Date.now(), series: { steps: [], train: [], valSteps: [], val: [] } });
    const out = { idbPut: [], idbGet: [], opfsPut: [], opfsGet: [] };
    for (let r = 0; r < rounds; r++) {
      let t = performance.now();
      await store.put([{ meta: meta(`b${r}`), bytes }]);
      out.idbPut.push(performance.now() - t);
      t = performance.now();
      const back = await store.checkpoint(`b${r}`);
      out.idbGet.push(performance.now() - t);
      if (back.length !== size) throw new Error('IndexedDB gave back other bytes');
      t = performance.now();
      const fh = await root.getFileHandle(`b${r}.safetensors`, { create: true });
      const w = await fh.createWritable();
      await w.write(bytes);
      await w.close();
      await store.put([{ meta: meta(`o${r}`), bytes: new Uint8Array(0) }]); // the record still needs a home
      out.opfsPut.push(performance.now() - t);
      t = performance.now();
      const f = await (await root.getFileHandle(`b${r}.safetensors`)).getFile();
      const got = new Uint8Array(await f.arrayBuffer());
      out.opfsGet.push(performance.now() - t);
      if (got.length !== size) throw new Error('OPFS gave back other bytes');
    }
    await store.remove([...Array(rounds).keys()].flatMap((r) => [`b${r}`, `o${r}`]));
    for (let r = 0; r < rounds; r++) await root.removeEntry(`b${r}.safetensors`);
    store.close();
    const med = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[s.length >> 1]; };
    return Object.fromEntries(Object.entries(out).map(([k, v]) => [k, med(v)]));
  }, { size, rounds });
}

await runPageBench('web', async ({ browser, url }) => {
  const page = await (await browser.newContext()).newPage();
  await page.goto(`${url}/train/`);
  await page.waitForSelector('#app[data-status="ready"]', { timeout: 120_000 });
  console.log(`kept-run storage in Chromium, median of ${ROUNDS} rounds (wall ms; load: ${(await import('node:os')).loadavg()[0].toFixed(2)} 1-min average)`);
  console.log('size        IDB put  OPFS put  ratio   IDB read  OPFS read  ratio');
  for (const size of SIZES) {
    const m = await measure(page, size, ROUNDS);
    const f = (x) => x.toFixed(1).padStart(8);
    console.log(`${(size / 1e6).toFixed(1).padStart(5)} MB  ${f(m.idbPut)}  ${f(m.opfsPut)}  ${(m.opfsPut / m.idbPut).toFixed(2).padStart(5)}  ${f(m.idbGet)}  ${f(m.opfsGet)}   ${(m.opfsGet / m.idbGet).toFixed(2).padStart(5)}`);
  }
});

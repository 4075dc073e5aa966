// train-helpers.mjs — shared steps of the training page's specs: a page trained by its own Start
// button (trained), a model built and trained by the wasm API in Node and saved for a spec
// (savedModel), a page with such a file uploaded as a learner uploads it (uploaded), and model
// files (a checkpoint, safetensors, config.json …) written for a spec and given to "Open a model"
// (modelFiles, openFiles).
import { mkdirSync, writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { expect, BOOT_MS, RUN_MS } from './fixtures.mjs';
import { loadGptApi } from '../wasm/load.mjs';

/** Opens the training page at `hash`, starts the run and waits for its end (done or diverged). */
export async function trained(page, hash) {
  await page.goto(`/train/${hash}`);
  await expect(page.locator('#app')).toHaveAttribute('data-status', 'ready', { timeout: BOOT_MS });
  await page.locator('#tr-start').click();
  await expect(page.locator('#app')).toHaveAttribute('data-train', /done|diverged/, { timeout: RUN_MS });
}

/**
 * A model of `spec` (gpt.create's), trained `steps` steps by the wasm API in Node and saved as
 * `name` in the test's output folder: its path (for beforeAll).
 */
export async function savedModel(testInfo, name, spec, steps) {
  const gpt = await loadGptApi();
  const run = gpt.create(spec);
  run.train(steps);
  const path = testInfo.outputPath(name);
  await writeFile(path, run.save());
  run.free();
  return path;
}

/** Opens the training page at `hash` and uploads the model file at `path`; waits until it is loaded. */
export async function uploaded(page, path, hash = '') {
  await page.goto(`/train/${hash}`);
  await expect(page.locator('#app')).toHaveAttribute('data-status', 'ready', { timeout: BOOT_MS });
  await page.locator('#tr-upload-file').setInputFiles(path);
  // the loaded message, not "Reading <name>…", which names the file too
  const name = basename(path).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  await expect(page.locator('#tr-ckpt-msg')).toContainText(new RegExp(`^(Loaded ${name}:|已加载 ${name}：)`), { timeout: RUN_MS });
}

/**
 * Writes `set` ({file name: bytes}) into the test's output folder, under its subfolder `dir` if
 * given (a spec that opens two sets of the same names): their paths, in the set's order.
 */
export function modelFiles(testInfo, set, dir = '') {
  return Object.entries(set).map(([name, bytes]) => {
    const path = testInfo.outputPath(dir, name);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, bytes);
    return path;
  });
}

/**
 * Writes `set` as modelFiles does and gives the files to the training page's "Open a model"
 * picker (#tr-open-file): their paths. The caller waits for the state it expects (data-open …).
 */
export async function openFiles(page, testInfo, set, dir = '') {
  const paths = modelFiles(testInfo, set, dir);
  await page.locator('#tr-open-file').setInputFiles(paths);
  return paths;
}

#!/usr/bin/env node
// scripts/vendor.mjs — copies the page's kept browser libraries from node_modules (installed from
// package-lock.json by scripts/setup) into web/gen/vendor/, so the pages load them from their own
// origin: no CDN, and a strict Content-Security-Policy holds. Called by `scripts/build wasm`.
//
//   uPlot 1.6.x (MIT): dist/uPlot.iife.min.js becomes the ES module uplot.mjs (its one top-level
//   `var uPlot = …` plus `export default uPlot;`: the minified build is half the gzip size of
//   dist/uPlot.esm.js), and dist/uPlot.min.css is copied as it is. uPlot sets styles through the
//   CSSOM only (element.style.x = …), which style-src 'self' allows.
import { mkdir, readFile, writeFile, copyFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const from = `${root}node_modules/uplot/`;
const to = `${root}web/gen/vendor/`;

const pkg = JSON.parse(await readFile(`${from}package.json`, 'utf8').catch(() => {
  throw new Error('node_modules/uplot is missing: run scripts/setup (npm ci) first');
}));
const lock = JSON.parse(await readFile(`${root}package-lock.json`, 'utf8'));
const locked = lock.packages?.['node_modules/uplot']?.version;
if (pkg.version !== locked) throw new Error(`node_modules has uPlot ${pkg.version} but package-lock.json says ${locked}: run npm ci`);

const iife = await readFile(`${from}dist/uPlot.iife.min.js`, 'utf8');
if (!/^\s*(\/\*[\s\S]*?\*\/\s*)?var uPlot\s*=/.test(iife)) throw new Error('uPlot.iife.min.js no longer starts with `var uPlot =`: update scripts/vendor.mjs');
await mkdir(to, { recursive: true });
const header = `/* uPlot ${pkg.version} (MIT, ${pkg.homepage ?? 'github.com/leeoniya/uPlot'}), vendored by scripts/vendor.mjs from node_modules/uplot/dist/uPlot.iife.min.js */\n`;
await writeFile(`${to}uplot.mjs`, `${header}${iife}\nexport default uPlot;\n`);
await copyFile(`${from}dist/uPlot.min.css`, `${to}uplot.min.css`);
await copyFile(`${from}LICENSE`, `${to}uplot.LICENSE`);
console.log(`vendor: uPlot ${pkg.version} → web/gen/vendor/`);

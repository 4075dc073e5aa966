#!/usr/bin/env node
// scripts/pack.mjs — the package a course author installs or unpacks onto any static host:
// `npm run dist` builds, from the built site (web/, with web/gen/ from `scripts/build wasm`),
//
//   dist/attention-playground/              the package's folder: its own package.json (exports,
//                                           version, licence), README.md, CHANGELOG.md, LICENSE
//                                           and the files the pages and elements load
//   dist/attention-playground-<v>.tgz       `npm pack` of that folder (npm install ./that.tgz)
//   dist/attention-playground-<v>.zip       the same folder as a plain zip, for hosts without npm
//   dist/attention-playground-<v>.sizes.json  its files, bytes unpacked, bytes of the .tgz and the
//                                           .zip (null when skipped): the figures docs/courses.md
//                                           quotes (tests/wasm/package.test.mjs compares them)
//
// What goes in: the modules named in EXPORTS (attention.js, gpt.js, the elements, the course
// page's helpers), the pages in PAGES (the playground the stepper's "copy link" opens, the
// iframe embed page, the SCORM player the author mode zips, the training page), their .d.ts, and
// every file those load, found by following their imports, import('…'), new URL('…',
// import.meta.url) and src/href (web/common/scorm-package.js's walk, the one the SCORM package uses): the
// wasm modules, styles, the vendored uPlot with its licence. No tests, no C++ sources, no bench,
// no examples. A new element is one line in EXPORTS.
//
//   --out DIR   write into DIR instead of dist/ (the tests use a temporary folder)
//   --no-zip    skip the zip;  --no-tgz  skip npm pack
//
// Before it writes anything it loads the packed attention.js in Node and checks that the wasm
// core's version() is the package's version (package.json's), so a stale or missing build fails
// here, not in a course. Exit 1 with the reason.
import { cp, mkdir, readFile, rm, writeFile, stat } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import { deflateRawSync } from 'node:zlib';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { collectFiles, LAUNCH } from '../web/common/scorm-package.js';
import { writePages } from './pages.mjs';
import { zip } from '../web/common/zip.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const web = path.join(root, 'web');
const fail = (msg) => { console.error(`pack: ${msg}`); process.exit(1); };

/** The package's entry points: subpath → [module, its .d.ts or null]. */
export const EXPORTS = {
  '.': ['attention.js', 'attention.d.ts'],
  './attention.js': ['attention.js', 'attention.d.ts'],
  './gpt.js': ['gpt.js', 'gpt.d.ts'],
  './attention-stepper.js': ['attention-stepper.js', 'attention-stepper.d.ts'],
  './gpt-lab.js': ['gpt-lab.js', 'gpt-lab.d.ts'],
  './embed-results.js': ['embed-results.js', 'embed-results.d.ts'],
  './embed-resize.js': ['embed-resize.js', null],
};
/** The pages shipped with the elements (not exports: a browser opens them by URL). */
export const PAGES = ['index.html', 'embed.html', 'lab-embed.html', LAUNCH, 'train/index.html'];
const NAME = 'attention-playground';
/** Files beside package.json in the repository that the package carries as they are. */
const DOCS = ['CHANGELOG.md', 'LICENSE'];

/** Every file of the package taken from web/, sorted: the walk from EXPORTS and PAGES (written first). */
export async function packageFiles() {
  await writePages();
  const entries = [...new Set([...Object.values(EXPORTS).flat().filter(Boolean), ...PAGES])];
  const found = await collectFiles((p) => readFile(path.join(web, p), 'utf8'), { entries, skip: new Set() });
  // links to a folder ('./train/') are pages, opened by URL: the walk does not pack folders
  const files = found.filter((p) => !p.endsWith('/'));
  // a vendored library goes with its licence (gen/vendor/uplot.mjs → gen/vendor/uplot.LICENSE)
  for (const f of [...files]) {
    const m = /^gen\/vendor\/([^/.]+)\./.exec(f);
    if (m && !files.includes(`gen/vendor/${m[1]}.LICENSE`)) files.push(`gen/vendor/${m[1]}.LICENSE`);
  }
  return files.sort();
}

/** The package's package.json, for `version` and the top-level names in `files`. */
export function manifest(version, files) {
  const exportsMap = {};
  for (const [sub, [mod, types]] of Object.entries(EXPORTS)) {
    exportsMap[sub] = types ? { types: `./${types}`, default: `./${mod}` } : `./${mod}`;
  }
  exportsMap['./package.json'] = './package.json';
  const top = [...new Set(files.map((f) => f.split('/')[0] + (f.includes('/') ? '/' : '')))].sort();
  return {
    name: NAME,
    version,
    description: 'Attention Playground: a C++ attention and tiny-GPT core in WebAssembly, its JS API, and <attention-stepper> for course pages. Serve the folder from any static host.',
    license: 'MIT',
    type: 'module',
    exports: exportsMap,
    types: './attention.d.ts',
    files: [...top, ...DOCS],
    sideEffects: ['./attention-stepper.js', './embed-resize.js', '*.css'],
    keywords: ['attention', 'transformer', 'softmax', 'webassembly', 'education', 'web-component', 'scorm'],
  };
}

/** The package's README: what it is and the two ways to use it (docs/courses.md has the rest). */
function readme(version) {
  return `# Attention Playground ${version}

A C++ attention and tiny-GPT core compiled to WebAssembly, its JavaScript API (\`attention.js\`,
\`gpt.js\`, with TypeScript declarations) and \`<attention-stepper>\`, the attention stepper as one
HTML element. Every module finds its wasm and styles next to itself (\`import.meta.url\`), so the
folder works from any path of any static host. Licence: MIT (LICENSE; uPlot's own MIT licence is in
gen/vendor/).

## On a static host (the zip, or this folder)

Copy the folder to your site, for example as \`/course/attention-playground/\`, then on a page:

\`\`\`html
<script type="module" src="/course/attention-playground/attention-stepper.js"></script>
<attention-stepper preset="identity"></attention-stepper>
<attention-stepper exercise="identity-softmax"></attention-stepper>
\`\`\`

Serve \`.wasm\` as \`application/wasm\` and \`.mjs\`/\`.js\` as JavaScript (every common host does). The
folder also holds the playground page (\`index.html\`), the iframe embed page (\`embed.html\`, with
\`embed-resize.js\` and \`embed-results.js\` for the course page), the training page (\`train/\`) and the
SCORM player the author mode packs.

## With npm and a bundler

\`\`\`js
import 'attention-playground/attention-stepper.js';           // defines <attention-stepper>
import { loadAttention } from 'attention-playground';          // the JS API (attention.d.ts)
const api = await loadAttention();
api.trace({ x: '1 0; 0 1', W_q: '1 0; 0 1', W_k: '1 0; 0 1', W_v: '1 0; 0 1' }).heads[0].weights;
// [[0.6698, 0.3302], [0.3302, 0.6698]] (float32)
\`\`\`

In Node, pass the wasm bytes:
\`loadAttention({ wasmBinary: await readFile(new URL('gen/attention_core.wasm', import.meta.resolve('attention-playground'))) })\`
(the repository's docs/api.md and docs/courses.md have the rest).
`;
}

/** Builds the package folder in outDir/attention-playground/ and returns {dir, version, files}. */
export async function buildFolder(outDir) {
  const { version } = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8'));
  const dir = path.join(outDir, NAME);
  let files;
  try {
    files = await packageFiles();
    await rm(dir, { recursive: true, force: true });
    for (const f of files) {
      await mkdir(path.dirname(path.join(dir, f)), { recursive: true });
      await cp(path.join(web, f), path.join(dir, f));
    }
  } catch (e) {
    // a clean clone has no web/gen/: say what to run rather than pack a package without its core
    if (e.code === 'ENOENT') fail(`${path.relative(root, e.path)} is missing${e.path.includes(`${path.sep}gen${path.sep}`) ? ': build the wasm core first (scripts/build wasm)' : ''}`);
    throw e;
  }
  for (const f of DOCS) await cp(path.join(root, f), path.join(dir, f)).catch(() => fail(`${f} is missing`));
  await writeFile(path.join(dir, 'README.md'), readme(version));
  await writeFile(path.join(dir, 'package.json'), `${JSON.stringify(manifest(version, files), null, 2)}\n`);

  // the packed core must be this version's: load it as a user would
  const { loadAttention } = await import(pathToFileURL(path.join(dir, 'attention.js')).href);
  const api = await loadAttention({ wasmBinary: await readFile(path.join(dir, 'gen/attention_core.wasm')) });
  if (api.version !== version) fail(`the wasm core says version ${api.version} but package.json says ${version}: rebuild (scripts/build wasm) or bump both (CMakeLists.txt, src/api/api.cpp)`);
  return { dir, version, files: [...files, ...DOCS, 'README.md', 'package.json'].sort() };
}

/** The folder as a zip whose one top folder is attention-playground/: [{path, data}] → bytes. */
export async function zipFolder(dir, files) {
  const entries = [];
  for (const f of files) entries.push({ path: `${NAME}/${f}`, data: new Uint8Array(await readFile(path.join(dir, f))) });
  return zip(entries, { deflateRaw: (b) => new Uint8Array(deflateRawSync(b, { level: 9 })) });
}

async function main() {
  let opt;
  try {
    opt = parseArgs({ options: { out: { type: 'string' }, 'no-zip': { type: 'boolean' }, 'no-tgz': { type: 'boolean' } } }).values;
  } catch (e) {
    fail(e.message);
  }
  const outDir = path.resolve(opt.out ?? path.join(root, 'dist'));
  await mkdir(outDir, { recursive: true });
  const { dir, version, files } = await buildFolder(outDir);
  const size = (await Promise.all(files.map((f) => stat(path.join(dir, f))))).reduce((s, st) => s + st.size, 0);
  console.log(`${path.relative(process.cwd(), dir) || dir}/: ${NAME} ${version}, ${files.length} files, ${(size / 1024).toFixed(0)} kB`);
  const sizes = { version, files: files.length, unpacked_bytes: size, tgz_bytes: null, zip_bytes: null };
  if (!opt['no-tgz']) {
    const out = execFileSync('npm', ['pack', '--json', '--pack-destination', outDir], { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
    const [info] = JSON.parse(out);
    const packed = info.files.map((f) => f.path).sort();
    const missing = files.filter((f) => !packed.includes(f));
    const extra = packed.filter((f) => !files.includes(f));
    if (missing.length || extra.length) fail(`npm pack took ${extra.length ? `extra files: ${extra.join(', ')}` : ''}${missing.length ? ` left out: ${missing.join(', ')}` : ''}`);
    console.log(`${path.relative(process.cwd(), path.join(outDir, info.filename))}: npm pack, ${info.entryCount} files, ${(info.size / 1024).toFixed(0)} kB`);
    sizes.tgz_bytes = info.size;
  }
  if (!opt['no-zip']) {
    const name = path.join(outDir, `${NAME}-${version}.zip`);
    const bytes = await zipFolder(dir, files);
    await writeFile(name, bytes);
    console.log(`${path.relative(process.cwd(), name)}: zip, ${files.length} files in ${NAME}/, ${(bytes.length / 1024).toFixed(0)} kB`);
    sizes.zip_bytes = bytes.length;
  }
  await writeFile(path.join(outDir, `${NAME}-${version}.sizes.json`), `${JSON.stringify(sizes, null, 2)}\n`);
  const mb = (b) => (b / 2 ** 20).toFixed(1);
  console.log(`package: ${sizes.files} files, ${mb(size)} MB unpacked${sizes.tgz_bytes ? `, ${mb(sizes.tgz_bytes)} MB packed (.tgz)` : ''}`);
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) await main();

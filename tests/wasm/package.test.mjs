// package.test.mjs — the shipped package as a course author gets it: `scripts/pack.mjs` (npm run
// dist) builds the tgz and the zip into a temporary folder; the tarball's file list holds the
// modules, types, wasm and page assets and no tests, sources, benchmarks or examples; every
// export and `files` entry of its package.json exists; the zip holds the same files under one
// folder; and `npm install ./the.tgz` into an empty project (offline: the package has no
// dependencies) gives a package whose bare specifiers resolve through `exports` (and only them),
// with a core that computes the identity example's softmax and a GPT that lists its tasks.
// docs/courses.md's size figures are the packer's (its .sizes.json), within 10%.
// The browser side (the tarball unpacked under a deep path and served) is tests/e2e/package.spec.mjs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from './load.mjs';

const ROOT_PKG = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
const NAME = 'attention-playground';
let tmp;
let tgz;
let zipFile;

before(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ap-package-'));
  execFileSync(process.execPath, [path.join(ROOT, 'scripts/pack.mjs'), '--out', path.join(tmp, 'out')], { stdio: ['ignore', 'ignore', 'inherit'] });
  tgz = path.join(tmp, 'out', `${NAME}-${ROOT_PKG.version}.tgz`);
  zipFile = path.join(tmp, 'out', `${NAME}-${ROOT_PKG.version}.zip`);
});
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

const tarList = () => execFileSync('tar', ['tzf', tgz], { encoding: 'utf8' }).trim().split('\n').map((f) => f.replace(/^package\//, '')).filter((f) => !f.endsWith('/')).sort();

test('the tarball holds the modules, types, wasm and page assets, and no tests, sources or benchmarks', () => {
  const files = tarList();
  for (const f of ['package.json', 'README.md', 'CHANGELOG.md', 'LICENSE', 'attention.js', 'attention.d.ts', 'gpt.js', 'gpt.d.ts',
    'attention-stepper.js', 'attention-stepper.d.ts', 'embed-results.js', 'embed-results.d.ts', 'embed-resize.js',
    'gpt-lab.js', 'gpt-lab.d.ts', 'gpt-lab.css', 'lab-embed.html',
    'gen/attention_core.mjs', 'gen/attention_core.wasm', 'gen/gpt_core.mjs', 'gen/gpt_core.wasm',
    'gpt-open.js', 'gpt-full.js', 'gen/gpt_core_full.mjs', 'gen/gpt_core_full.wasm',
    'stepper/stepper.css', 'stepper/share.css', 'index.html', 'embed.html', 'scorm/player.html', 'train/index.html',
    'train/worker.js', 'train/i18n-zh.js', 'gen/vendor/uplot.mjs', 'gen/vendor/uplot.LICENSE',
    'common/ui.js', 'common/lang.js', 'common/non-finite.js', 'common/state.js']) {
    assert.ok(files.includes(f), `the tarball lacks ${f}`);
  }
  const bad = files.filter((f) => /^(tests?|src|bench|scripts|examples|docs|build[^/]*|node_modules|\.ci)\//.test(f) || /\/examples\//.test(f)
    || /\.(cpp|cc|h|hpp|cmake|py|ipynb|spec\.mjs|test\.mjs)$/.test(f) || /^(CMakeLists\.txt|package-lock\.json|playwright\.config\.mjs)$/.test(f));
  assert.deepEqual(bad, [], 'tests, sources or repository files in the tarball');
  // every file is one a page, an element or an export loads (or a licence/doc beside package.json)
  assert.ok(files.every((f) => /\.(m?js|d\.ts|css|html|wasm|md|json)$|LICENSE$/.test(f)), files.join(' '));
});

test('package.json: the version, MIT, and every export and files entry exists', () => {
  const pkg = JSON.parse(execFileSync('tar', ['xzOf', tgz, 'package/package.json'], { encoding: 'utf8' }));
  const files = tarList();
  assert.equal(pkg.name, NAME);
  assert.equal(pkg.version, ROOT_PKG.version);
  assert.match(pkg.version, /^0\.\d+\.\d+$/);
  assert.equal(pkg.license, 'MIT');
  assert.equal(pkg.private, undefined);
  assert.equal(pkg.scripts, undefined, 'the repository\'s scripts do not ship');
  assert.equal(pkg.dependencies, undefined);
  assert.equal(pkg.devDependencies, undefined);
  for (const sub of ['.', './attention.js', './gpt.js', './attention-stepper.js', './gpt-lab.js']) assert.ok(pkg.exports[sub], `no export ${sub}`);
  for (const [sub, target] of Object.entries(pkg.exports)) {
    for (const t of typeof target === 'string' ? [target] : Object.values(target)) {
      assert.ok(files.includes(t.replace(/^\.\//, '')), `export ${sub} → ${t} is not in the tarball`);
    }
  }
  for (const f of pkg.files) assert.ok(files.some((g) => g === f || g.startsWith(f)), `files: ${f} matches nothing`);
});

test('docs/courses.md quotes the packer\'s own figures (files, MB unpacked, MB packed), within 10%', () => {
  const sizes = JSON.parse(fs.readFileSync(path.join(tmp, 'out', `${NAME}-${ROOT_PKG.version}.sizes.json`), 'utf8'));
  // the packer's counts are the package's: its file count is the tarball's, its packed size the .tgz's
  assert.equal(sizes.files, tarList().length);
  assert.equal(sizes.tgz_bytes, fs.statSync(tgz).size);
  assert.equal(sizes.zip_bytes, fs.statSync(zipFile).size);
  const doc = fs.readFileSync(path.join(ROOT, 'docs/courses.md'), 'utf8').replace(/\s+/g, ' ');
  const m = /About (\d+) files, ([\d.]+) MB unpacked, ([\d.]+) MB packed/.exec(doc);
  assert.ok(m, 'docs/courses.md says "About N files, X MB unpacked, Y MB packed"');
  const MB = 2 ** 20; // as the packer prints them
  const near = (quoted, actual, what) => assert.ok(Math.abs(quoted - actual) <= 0.1 * actual,
    `docs/courses.md says ${quoted} for ${what}; npm run dist gives ${Number.isInteger(actual) ? actual : actual.toFixed(2)}: update the sentence`);
  near(Number(m[1]), sizes.files, 'the files');
  near(Number(m[2]), sizes.unpacked_bytes / MB, 'MB unpacked');
  near(Number(m[3]), sizes.tgz_bytes / MB, 'MB packed');
});

test('the zip holds the same files under attention-playground/', () => {
  const listed = execFileSync('unzip', ['-Z1', zipFile], { encoding: 'utf8' }).trim().split('\n').sort();
  assert.deepEqual(listed, tarList().map((f) => `${NAME}/${f}`));
});

test('npm install of the tarball: exports resolve, the core computes, private paths stay private', () => {
  const project = path.join(tmp, 'course');
  fs.mkdirSync(project);
  fs.writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'course', version: '1.0.0', private: true, type: 'module' }));
  execFileSync('npm', ['install', '--offline', '--no-audit', '--no-fund', '--loglevel=error', tgz], { cwd: project, stdio: ['ignore', 'ignore', 'inherit'] });
  const script = `
    import { readFile } from 'node:fs/promises';
    import { loadAttention, AttentionError } from 'attention-playground';
    import * as viaPath from 'attention-playground/attention.js';
    import { loadGpt } from 'attention-playground/gpt.js';
    import { RESULT_TYPE } from 'attention-playground/embed-results.js';
    import pkg from 'attention-playground/package.json' with { type: 'json' };
    const wasm = (f) => readFile(new URL('gen/' + f, import.meta.resolve('attention-playground')));
    const api = await loadAttention({ wasmBinary: await wasm('attention_core.wasm') });
    const I = '1 0; 0 1';
    const w = api.trace({ x: I, W_q: I, W_k: I, W_v: I }).heads[0].weights;
    let bad = '';
    try { api.trace({ x: '1 x' }); } catch (e) { bad = e instanceof AttentionError ? e.field : 'not an AttentionError'; }
    const gpt = await loadGpt({ wasmBinary: await wasm('gpt_core.wasm') });
    let hidden = '';
    try { await import('attention-playground/common/state.js'); } catch (e) { hidden = e.code; }
    console.log(JSON.stringify({ w, bad, version: api.version, pkg: pkg.version, same: viaPath.loadAttention === loadAttention,
      tasks: gpt.tasks().map((t) => t.name), type: RESULT_TYPE, hidden }));`;
  fs.writeFileSync(path.join(project, 'check.mjs'), script);
  const out = JSON.parse(execFileSync(process.execPath, ['check.mjs'], { cwd: project, encoding: 'utf8' }));
  assert.deepEqual(out.w.flat().map((v) => v.toFixed(4)), ['0.6698', '0.3302', '0.3302', '0.6698']);
  assert.equal(out.bad, 'x');
  assert.equal(out.version, ROOT_PKG.version);
  assert.equal(out.pkg, ROOT_PKG.version);
  assert.equal(out.same, true);
  assert.ok(out.tasks.includes('copy'), out.tasks.join(' '));
  assert.equal(out.type, 'attention-stepper:exercise');
  assert.equal(out.hidden, 'ERR_PACKAGE_PATH_NOT_EXPORTED');
});

test('a stale build is refused: the packed core must say the package\'s version', () => {
  // a copy of the repository whose package.json says another version than the built core
  const fake = path.join(tmp, 'fake');
  fs.mkdirSync(path.join(fake, 'scripts'), { recursive: true });
  for (const f of ['CHANGELOG.md', 'LICENSE']) fs.copyFileSync(path.join(ROOT, f), path.join(fake, f));
  fs.writeFileSync(path.join(fake, 'package.json'), JSON.stringify({ ...ROOT_PKG, version: '0.99.0' }));
  fs.symlinkSync(path.join(ROOT, 'web'), path.join(fake, 'web'));
  for (const f of ['scripts/pack.mjs', 'scripts/pages.mjs']) fs.copyFileSync(path.join(ROOT, f), path.join(fake, f));
  let err;
  try {
    execFileSync(process.execPath, [path.join(fake, 'scripts/pack.mjs'), '--out', path.join(tmp, 'fake-out'), '--no-zip', '--no-tgz'], { encoding: 'utf8', stdio: 'pipe' });
  } catch (e) {
    err = e;
  }
  assert.ok(err, 'pack.mjs accepted a core of another version');
  const v = ROOT_PKG.version.replace(/\./g, '\\.');
  assert.match(err.stderr, new RegExp(`wasm core says version ${v} but package\\.json says 0\\.99\\.0`));
});

test('a clean clone without the wasm build is refused with the command to run', () => {
  // a copy of the repository whose web/ has everything but gen/ (the build's output)
  const fake = path.join(tmp, 'unbuilt');
  fs.mkdirSync(path.join(fake, 'web'), { recursive: true });
  fs.mkdirSync(path.join(fake, 'scripts'));
  for (const f of fs.readdirSync(path.join(ROOT, 'web'))) if (f !== 'gen') fs.symlinkSync(path.join(ROOT, 'web', f), path.join(fake, 'web', f));
  for (const f of ['CHANGELOG.md', 'LICENSE', 'package.json']) fs.copyFileSync(path.join(ROOT, f), path.join(fake, f));
  for (const f of ['scripts/pack.mjs', 'scripts/pages.mjs']) fs.copyFileSync(path.join(ROOT, f), path.join(fake, f));
  const out = path.join(tmp, 'unbuilt-out');
  let err;
  try {
    execFileSync(process.execPath, [path.join(fake, 'scripts/pack.mjs'), '--out', out], { encoding: 'utf8', stdio: 'pipe' });
  } catch (e) {
    err = e;
  }
  assert.ok(err, 'pack.mjs packed without the wasm core');
  assert.match(err.stderr, /web\/gen\/attention_core\.mjs is missing: build the wasm core first \(scripts\/build wasm\)/);
  assert.deepEqual(fs.readdirSync(out).filter((f) => /\.(tgz|zip)$/.test(f)), []);
});

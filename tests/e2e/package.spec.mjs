// package.spec.mjs — the shipped package in Chromium, the hard way: `scripts/pack.mjs` (npm run
// dist) builds the tgz and the zip once into a temporary folder; each test unpacks one into an
// empty folder under a path of its own and serves it from a second server (hosts.mjs), so nothing
// comes from web/. The elements must find their wasm and styles relative to their own URL.
//   - the npm tarball under /deep/path/package/: <attention-stepper> computes the identity
//     example, an exercise element asks, gpt.js computes from a module of the course page, and
//     every file comes from the package's folder;
//   - the zip's pages: the playground (whose author mode zips a SCORM package from the package's
//     own files), the iframe embed page and the training page boot there;
//   - a Jupyter notebook (web/examples/notebook/lesson.ipynb) executed by Debian's
//     `jupyter nbconvert --execute --to html` with the unzipped package beside it: its HTML, served
//     over http, shows the stepper, the exercise and the iframe computing;
//   - the static-site recipe (web/examples/static-site/) with the package copied into the site,
//     served under a base path (/my-course/), under its strict CSP.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { test, expect, panelCells, BOOT_MS } from './fixtures.mjs';
import { startHost } from './hosts.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const { version } = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
const IDENTITY = ['0.6698', '0.3302', '0.3302', '0.6698'];

let tmp;
let tgz;
let zipFile;
// In order, in one worker: the beforeAll below builds its file once (the suite is otherwise fully parallel).
test.describe.configure({ mode: 'default' });

test.beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ap-ship-'));
  execFileSync(process.execPath, [path.join(ROOT, 'scripts/pack.mjs'), '--out', path.join(tmp, 'out')], { stdio: ['ignore', 'ignore', 'inherit'] });
  tgz = path.join(tmp, 'out', `attention-playground-${version}.tgz`);
  zipFile = path.join(tmp, 'out', `attention-playground-${version}.zip`);
});
test.afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** A new empty folder under the test's temporary one. */
const emptyDir = (...parts) => {
  const dir = path.join(tmp, ...parts);
  fs.mkdirSync(dir, { recursive: true });
  expect(fs.readdirSync(dir)).toEqual([]);
  return dir;
};

/** Every request's path on the host (to check where the wasm came from). */
function requestedPaths(page, host) {
  const seen = [];
  page.on('request', (r) => { if (r.url().startsWith(host.origin)) seen.push(new URL(r.url()).pathname); });
  return seen;
}

test('the npm tarball, unpacked under a deep path: the elements and gpt.js compute from there', async ({ page }) => {
  const site = emptyDir('x');
  const deep = emptyDir('x', 'deep', 'path');
  execFileSync('tar', ['xzf', tgz, '-C', deep]); // → deep/path/package/
  fs.writeFileSync(path.join(deep, 'lesson.html'), `<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; img-src 'self' data: blob:">
<title>A lesson</title><link rel="icon" href="data:,">
<script type="module" src="package/attention-stepper.js"></script>
<script type="module" src="package/gpt-lab.js"></script>
<script type="module" src="lesson.js"></script></head>
<body><h1>A lesson</h1>
<attention-stepper id="identity" preset="identity" embed></attention-stepper>
<attention-stepper id="exercise" exercise="identity-softmax" embed></attention-stepper>
<p>GPT tasks: <output id="tasks">…</output></p>
<gpt-lab id="lab" task="copy" steps="5" sections="training" autostart></gpt-lab></body></html>`);
  // a course page's own module: the GPT's API from the package, by relative URL
  fs.writeFileSync(path.join(deep, 'lesson.js'), `import { loadGpt } from './package/gpt.js';
const gpt = await loadGpt();
document.getElementById('tasks').textContent = gpt.tasks().map((t) => t.name).join(' ');`);
  const host = await startHost({ folders: { '/': site } });
  try {
    const seen = requestedPaths(page, host);
    await page.goto(host.url('/deep/path/lesson.html'));
    await expect(panelCells(page.locator('#identity'), 'weights')).toHaveText(IDENTITY, { timeout: BOOT_MS });
    await expect(page.locator('#exercise').getByRole('button', { name: 'Check answers' })).toBeVisible();
    await expect(page.locator('#tasks')).toContainText('copy', { timeout: BOOT_MS });
    // <gpt-lab> trains by itself (autostart): its worker and wasm come from the package too
    await expect(page.locator('#lab')).toHaveAttribute('data-status', 'done', { timeout: BOOT_MS });
    expect(seen).toContain('/deep/path/package/train/worker.js');
    expect(seen).toContain('/deep/path/package/gen/attention_core.wasm');
    expect(seen).toContain('/deep/path/package/gen/gpt_core.wasm');
    expect(seen).toContain('/deep/path/package/stepper/stepper.css');
    expect(seen.filter((p) => !p.startsWith('/deep/path/'))).toEqual([]);
  } finally {
    await host.close();
  }
});

test('the zip, unpacked elsewhere: the playground, the iframe embed page and the training page run from it', async ({ page }) => {
  const site = emptyDir('z');
  const place = emptyDir('z', 'another', 'place');
  execFileSync('unzip', ['-q', zipFile, '-d', place]); // → another/place/attention-playground/
  const host = await startHost({ folders: { '/': site } });
  const base = '/another/place/attention-playground/';
  try {
    await page.goto(host.url(`${base}index.html`));
    await expect(page.locator('#app')).toHaveAttribute('data-status', 'ready', { timeout: BOOT_MS });
    await expect(panelCells(page, 'weights')).toHaveText(IDENTITY);
    // the author mode zips a SCORM package from the package's own files (scorm/player.html and
    // what it loads must be there)
    await page.locator('select[data-key="exercise"]').selectOption('custom');
    await page.locator('figure[data-panel="scores"] td[data-r="1"][data-c="0"]').click();
    await expect(page.locator('.aps-exercise')).toContainText('1 cell asked.');
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download as a SCORM package' }).click()]);
    const scormZip = path.join(tmp, 'author-scorm.zip');
    await download.saveAs(scormZip);
    const listed = execFileSync('unzip', ['-Z1', scormZip], { encoding: 'utf8' });
    expect(listed).toContain('scorm/player.html');
    expect(listed).toContain('gen/attention_core.wasm');
    await page.goto(host.url(`${base}embed.html#preset=identity`));
    await expect(panelCells(page, 'weights')).toHaveText(IDENTITY, { timeout: BOOT_MS });
    await page.goto(host.url(`${base}train/`));
    await expect(page.locator('#app')).toHaveAttribute('data-status', 'ready', { timeout: BOOT_MS });
  } finally {
    await host.close();
  }
});

test.describe('a Jupyter notebook executed by nbconvert', () => {
  // Debian's nbconvert template loads require.js and MathJax from file:///usr/share/javascript/,
  // which a page served over http may not load: those two messages are the template's, not ours
  test.use({ ignoreProblems: [/Not allowed to load local resource: file:\/\/\/usr\/share\/javascript\//] });

  test('one cell each: the stepper, an exercise and the iframe compute in the HTML output', async ({ page }) => {
    const dir = emptyDir('nb', 'course', 'week-3');
    fs.copyFileSync(path.join(ROOT, 'web/examples/notebook/lesson.ipynb'), path.join(dir, 'lesson.ipynb'));
    execFileSync('unzip', ['-q', zipFile, '-d', dir]); // the project's files beside the notebook
    execFileSync('jupyter-nbconvert', ['--execute', '--to', 'html', 'lesson.ipynb'], {
      cwd: dir,
      stdio: ['ignore', 'ignore', 'pipe'],
      // no network, no writes to the user's Jupyter folders
      env: { ...process.env, PYDEVD_DISABLE_FILE_VALIDATION: '1', JUPYTER_RUNTIME_DIR: path.join(tmp, 'jupyter-runtime'), JUPYTER_CONFIG_DIR: path.join(tmp, 'jupyter-config'), IPYTHONDIR: path.join(tmp, 'ipython') },
    });
    const html = fs.readFileSync(path.join(dir, 'lesson.html'), 'utf8');
    // the executed cells' outputs are in the HTML (the element, the script tag, the iframe)
    expect(html).toContain('<attention-stepper id="nb-identity" preset="identity" lang="en" embed>');
    expect(html).toContain('<script type="module" src="attention-playground/attention-stepper.js"></script>');
    expect(html).toMatch(/<iframe[\s\S]*src="attention-playground\/embed\.html#preset=causal-4&lang=en"/);
    const host = await startHost({ folders: { '/': path.join(tmp, 'nb') } });
    try {
      await page.goto(host.url('/course/week-3/lesson.html'));
      await expect(panelCells(page.locator('#nb-identity'), 'weights')).toHaveText(IDENTITY, { timeout: BOOT_MS });
      const ex = page.locator('#nb-exercise');
      await ex.locator('figure[data-panel="weights"] td[data-r="0"][data-c="0"] input.aps-answer').fill('0.6698');
      await ex.getByRole('button', { name: 'Check answers' }).click();
      await expect(ex.locator('figure[data-panel="weights"] td[data-r="0"][data-c="0"]')).toHaveClass(/is-right/);
      const frame = page.frameLocator('iframe[src*="embed.html"]');
      const row1 = frame.locator('figure[data-panel="weights"] .aps-mat:not(.aps-stats) tbody tr').first().locator('td[data-c]');
      await expect(row1).toHaveText(['1', '0', '0', '0'], { timeout: BOOT_MS });
    } finally {
      await host.close();
    }
  });
});

test('the static-site recipe: the package copied into a site served under a base path', async ({ page }) => {
  const pub = emptyDir('ssg', 'public');
  fs.cpSync(path.join(ROOT, 'web/examples/static-site'), pub, { recursive: true, filter: (src) => !src.includes('attention-playground') });
  execFileSync('unzip', ['-q', zipFile, '-d', pub]);
  const host = await startHost({ folders: { '/my-course/': pub } });
  try {
    await page.goto(host.url('/my-course/unit-2/attention.html'));
    await expect(panelCells(page.locator('#identity'), 'weights')).toHaveText(IDENTITY, { timeout: BOOT_MS });
    await expect(page.locator('#exercise').getByRole('button', { name: 'Check answers' })).toBeVisible();
    const frame = page.frameLocator('#frame');
    await expect(frame.locator('figure[data-panel="weights"] .aps-mat:not(.aps-stats) tbody tr').first().locator('td[data-c]'))
      .toHaveText(['1', '0', '0', '0'], { timeout: BOOT_MS });
    // embed-resize.js fits the iframe to its content
    await expect.poll(async () => (await page.locator('#frame').boundingBox()).height).not.toBe(600);
  } finally {
    await host.close();
  }
});

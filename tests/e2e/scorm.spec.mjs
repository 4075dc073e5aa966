// scorm.spec.mjs — the SCORM 1.2 package as an LMS runs it: `npm run scorm` builds the zip,
// Debian's unzip unpacks it, and a small LMS page (a second server, hosts.mjs) runs a real SCORM
// runtime, scorm-again's Scorm12API, as window.API and frames the package's launch page. The LMS
// keeps what the runtime holds at each commit and finish in its own storage and loads it back at
// the next launch, as an LMS's database would. The learner answers wrong, then right, leaves and
// comes back (their answers are there, from cmi.suspend_data), solves the second exercise, and
// leaves; the runtime's record has the status and the score. The manifest is checked against
// what SCORM 1.2's content packaging asks; without an LMS the page says so once and still works.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { test as base, expect, BOOT_MS } from './fixtures.mjs';
import { startHost } from './hosts.mjs';
import { ready } from './stepper-helpers.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const EXERCISES = ['exercise=identity-softmax', 'exercise=naive-1000'];

// The LMS: scorm-again's runtime as window.API; what it holds at each commit and finish is kept
// in localStorage ('lms.record') and loaded back at the next launch (entry = resume after a
// suspend). lmsEvents: every commit and finish with the status and score at that moment.
const lmsPage = (launch) => `<!doctype html><html><head><meta charset="utf-8"><title>LMS</title><link rel="icon" href="data:,">
<script src="/scorm-again/scorm12.js"></script>
<script>
  const kept = JSON.parse(localStorage.getItem('lms.record') || 'null');
  window.API = new Scorm12API({ logLevel: 4 });
  if (kept) API.loadFromJSON({ core: { lesson_status: kept.core.lesson_status, score: kept.core.score,
    entry: kept.core.exit === 'suspend' ? 'resume' : '' }, suspend_data: kept.suspend_data });
  window.lmsEvents = [];
  const keep = (event) => {
    const cmi = API.renderCMIToJSONObject().cmi;
    localStorage.setItem('lms.record', JSON.stringify(cmi));
    lmsEvents.push({ event, status: cmi.core.lesson_status, raw: cmi.core.score.raw });
  };
  API.on('LMSCommit', () => keep('commit'));
  API.on('LMSFinish', () => keep('finish'));
</script></head>
<body><h1>A course in an LMS</h1><iframe id="sco" title="Activity" src="${launch}" width="1200" height="900"></iframe></body></html>`;

const test = base.extend({
  lms: async ({}, use) => {
    const host = await startHost({
      pages: {
        '/lms.html': lmsPage('/course/scorm/player.html'),
        // an LMS that opens the SCO in a window of its own: the API is found through window.opener
        '/lms-window.html': lmsPage('about:blank').replace('<iframe', '<button type="button" id="open">Open the activity</button><iframe')
          .replace('</body>', '<script>document.getElementById("open").onclick = () => window.open("/course/scorm/player.html", "sco");</script></body>'), '/blank.html': '<!doctype html><title>elsewhere</title><link rel="icon" href="data:,">' },
      folders: { '/course/': pkg.dir, '/scorm-again/': path.join(ROOT, 'node_modules/scorm-again/dist') },
    });
    await use(host);
    await host.close();
  },
});

/** The package, built and unpacked once for the file's tests: {zip, dir}. */
let pkg;
// In order, in one worker: the beforeAll below builds its file once (the suite is otherwise fully parallel).
test.describe.configure({ mode: 'default' });

test.beforeAll(() => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'scorm-'));
  const zip = path.join(tmp, 'quiz.zip');
  execFileSync('npm', ['run', '--silent', 'scorm', '--', '-o', zip, '-t', 'Softmax <by hand> & NaN', ...EXERCISES], { cwd: ROOT });
  const dir = path.join(tmp, 'course');
  execFileSync('unzip', ['-q', zip, '-d', dir]);
  pkg = { zip, dir, tmp };
});
test.afterAll(() => fs.rmSync(pkg.tmp, { recursive: true, force: true }));

const answer = (frame, r, c) => frame.locator(`figure[data-panel="weights"] td[data-r="${r}"][data-c="${c}"] input.aps-answer`);
const record = (page) => page.evaluate(() => JSON.parse(localStorage.getItem('lms.record')));
const events = (page) => page.evaluate(() => window.lmsEvents);

async function fillAndCheck(frame, answers) {
  for (const [k, v] of Object.entries(answers)) {
    const [r, c] = k.split(',').map(Number);
    await answer(frame, r, c).fill(v);
  }
  await frame.getByRole('button', { name: 'Check answers' }).click();
}

test('in an LMS (scorm-again): status, score and answers reach the runtime; a return restores the answers; passed at the end', async ({ page, lms }) => {
  await page.goto(lms.url('/lms.html'));
  const sco = page.frameLocator('#sco');
  await expect(sco.getByRole('status').filter({ hasText: 'Connected to the course (LMS)' })).toBeVisible({ timeout: BOOT_MS });
  await expect(answer(sco, 0, 0)).toBeVisible({ timeout: BOOT_MS });
  await expect(sco.getByText('Exercise 1 of 2')).toBeVisible();
  // initialised: incomplete, the score's range
  await expect.poll(() => events(page)).toContainEqual({ event: 'commit', status: 'incomplete', raw: '' });
  let r = await record(page);
  expect(r.core.score).toMatchObject({ min: '0', max: '100' });

  // a wrong answer: 3 of 4 right in the first of two exercises → (3/4 + 0) / 2 = 37.5 → 38
  await fillAndCheck(sco, { '0,0': '0.6698', '0,1': '0.35', '1,0': '0.3302', '1,1': '0.6698' });
  await expect(sco.locator('.aps-exercise-result')).toContainText('3 of 4 right');
  await expect.poll(async () => (await events(page)).at(-1)).toEqual({ event: 'commit', status: 'incomplete', raw: '38' });
  await expect(sco.getByText('Score: 38 % · not finished yet')).toBeVisible();
  r = await record(page);
  const kept = JSON.parse(r.suspend_data);
  expect(kept.answers['identity-softmax'].answers['weights:0:1']).toBe('0.35');
  expect(kept.results['identity-softmax']).toEqual({ right: 3, total: 4, solved: false });

  // the learner leaves (the SCO finishes with exit = suspend) and comes back
  await page.goto(lms.url('/blank.html'));
  r = await record(page);
  expect(r.core.exit).toBe('suspend');
  expect(r.core.session_time).toMatch(/^\d{2,4}:\d{2}:\d{2}(\.\d{1,2})?$/); // CMITimespan
  expect(r.core.lesson_status).toBe('incomplete');
  // the answers were kept by the LMS, not by the browser's storage for the page
  expect(await page.evaluate(() => Object.keys(localStorage).filter((k) => k.startsWith('attention-playground.exercise.')))).toEqual([]);
  await page.goto(lms.url('/lms.html'));
  await expect(answer(sco, 0, 1)).toHaveValue('0.35', { timeout: BOOT_MS });
  await expect(answer(sco, 0, 0)).toHaveValue('0.6698');
  await expect(answer(sco, 1, 1)).toHaveValue('0.6698');
  await expect(sco.locator('.aps-exercise-result')).toContainText('3 of 4 right');
  await expect(sco.getByText('Score: 38 % · not finished yet')).toBeVisible();

  // the right one: the first exercise solved → 50, still incomplete
  await fillAndCheck(sco, { '0,1': '0.3302' });
  await expect(sco.locator('.aps-exercise-result')).toContainText('All 4 right');
  await expect.poll(async () => (await events(page)).at(-1)).toEqual({ event: 'commit', status: 'incomplete', raw: '50' });

  // the second exercise: the naive softmax at 1000 is NaN
  await sco.getByRole('button', { name: 'Next →' }).click();
  await expect(sco.getByText('Exercise 2 of 2')).toBeVisible();
  await fillAndCheck(sco, { '0,0': 'nan', '0,1': 'NaN' });
  await expect(sco.locator('.aps-exercise-result')).toContainText('All 2 right');
  await expect.poll(async () => (await events(page)).at(-1)).toEqual({ event: 'commit', status: 'passed', raw: '100' });
  await expect(sco.getByText('Score: 100 % · all solved ✓')).toBeVisible();

  // leaving: the runtime's final record
  await page.goto(lms.url('/blank.html'));
  r = await record(page);
  expect(r.core.lesson_status).toBe('passed');
  expect(r.core.score).toMatchObject({ raw: '100', min: '0', max: '100' });
  expect(r.core.exit).toBe('suspend');
  expect(JSON.parse(r.suspend_data)).toMatchObject({ v: 1, at: 1, results: { 'identity-softmax': { solved: true }, 'naive-1000': { right: 2, total: 2, solved: true } } });
  expect(r.suspend_data.length).toBeLessThanOrEqual(4096);
});

test('an LMS that opens the activity in a new window: the API is found through the opener', async ({ page, lms }) => {
  await page.goto(lms.url('/lms-window.html'));
  const [sco] = await Promise.all([page.waitForEvent('popup'), page.getByRole('button', { name: 'Open the activity' }).click()]);
  await expect(sco.getByText(/^Connected to the course \(LMS\)/)).toBeVisible({ timeout: BOOT_MS });
  await expect(answer(sco, 0, 0)).toBeVisible({ timeout: BOOT_MS });
  await fillAndCheck(sco, { '0,0': '0.6698', '0,1': '0.3302', '1,0': '0.3302', '1,1': '0.6698' });
  await expect.poll(async () => (await events(page)).at(-1)).toEqual({ event: 'commit', status: 'incomplete', raw: '50' });
  // closing the window finishes the session
  await sco.close({ runBeforeUnload: true });
  await expect.poll(async () => (await events(page)).at(-1)).toEqual({ event: 'finish', status: 'incomplete', raw: '50' });
});

test('without an LMS the package is a plain page, and says so once', async ({ page, lms }) => {
  await page.goto(lms.url('/course/scorm/player.html'));
  await expect(answer(page, 0, 0)).toBeVisible({ timeout: BOOT_MS });
  await expect(page.getByText(/^No LMS found/)).toHaveCount(1);
  await fillAndCheck(page, { '0,0': '0.6698', '0,1': '0.3302', '1,0': '0.3302', '1,1': '0.6698' });
  await expect(page.locator('.aps-exercise-result')).toContainText('All 4 right');
  await expect(page.getByText('Score: 50 % · not finished yet')).toBeVisible();
  await expect(page.getByText(/^No LMS found/)).toHaveCount(1);
  await expect(page).toHaveTitle('Softmax <by hand> & NaN');
  // the learner switches the stepper to Chinese: the page's own words follow
  await page.locator('[data-key="lang.zh"]').click();
  await expect(page.getByText(/^没有找到 LMS/)).toHaveCount(1);
  await expect(page.getByText('第 1 个练习，共 2 个')).toBeVisible();
  await expect(page.getByText('得分：50 % · 尚未完成')).toBeVisible();
  await page.getByRole('button', { name: '下一个 →' }).click();
  await expect(page.getByText('第 2 个练习，共 2 个')).toBeVisible();
  await expect(page.locator('.aps-exercise-title')).toHaveText(/1000/);
  await expect(page.locator('html')).toHaveAttribute('lang', 'zh');
});

test('the manifest: what SCORM 1.2 content packaging asks, and every file of the package listed', async ({ page, lms }) => {
  const text = fs.readFileSync(path.join(pkg.dir, 'imsmanifest.xml'), 'utf8');
  const packed = [];
  const walk = (d) => { for (const e of fs.readdirSync(d, { withFileTypes: true })) { const p = path.join(d, e.name); if (e.isDirectory()) walk(p); else packed.push(path.relative(pkg.dir, p).split(path.sep).join('/')); } };
  walk(pkg.dir);
  // the zip is sound (unzip -t checks every entry's CRC) and has the manifest at its root
  expect(execFileSync('unzip', ['-tq', pkg.zip], { encoding: 'utf8' })).toMatch(/^No errors detected/);
  expect(execFileSync('unzip', ['-Z1', pkg.zip], { encoding: 'utf8' }).split('\n')).toContain('imsmanifest.xml');
  await page.goto(lms.url('/blank.html'));
  const m = await page.evaluate((xml) => {
    const CP = 'http://www.imsproject.org/xsd/imscp_rootv1p1p2';
    const ADLCP = 'http://www.adlnet.org/xsd/adlcp_rootv1p2';
    const doc = new DOMParser().parseFromString(xml, 'application/xml');
    if (doc.getElementsByTagName('parsererror').length) return { error: doc.getElementsByTagName('parsererror')[0].textContent };
    const all = (el, name) => [...el.getElementsByTagNameNS(CP, name)];
    const root = doc.documentElement;
    const orgs = all(root, 'organizations')[0];
    return {
      root: [root.namespaceURI, root.localName],
      identifiers: [...doc.querySelectorAll('[identifier]')].map((e) => e.getAttribute('identifier')),
      schema: all(root, 'schema')[0]?.textContent,
      schemaversion: all(root, 'schemaversion')[0]?.textContent,
      orgDefault: orgs.getAttribute('default'),
      orgIds: all(orgs, 'organization').map((o) => o.getAttribute('identifier')),
      orgTitle: all(orgs, 'title')[0]?.textContent,
      items: all(orgs, 'item').map((i) => ({ ref: i.getAttribute('identifierref'), title: all(i, 'title')[0]?.textContent })),
      resources: all(root, 'resource').map((r) => ({
        id: r.getAttribute('identifier'), type: r.getAttribute('type'), href: r.getAttribute('href'),
        scormtype: r.getAttributeNS(ADLCP, 'scormtype'), files: all(r, 'file').map((f) => f.getAttribute('href')),
      })),
    };
  }, text);
  expect(m.error).toBeUndefined();
  expect(m.root).toEqual(['http://www.imsproject.org/xsd/imscp_rootv1p1p2', 'manifest']);
  expect(m.schema).toBe('ADL SCORM');
  expect(m.schemaversion).toBe('1.2');
  // identifiers: XML IDs (NCNames), unique
  for (const id of m.identifiers) expect(id).toMatch(/^[A-Za-z_][\w.-]*$/);
  expect(new Set(m.identifiers).size).toBe(m.identifiers.length);
  // the default organization exists; its item points at the SCO; the title survives escaping
  expect(m.orgIds).toContain(m.orgDefault);
  expect(m.orgTitle).toBe('Softmax <by hand> & NaN');
  expect(m.items).toHaveLength(1);
  expect(m.resources).toHaveLength(1);
  const [res] = m.resources;
  expect(m.items[0].ref).toBe(res.id);
  expect(res).toMatchObject({ type: 'webcontent', scormtype: 'sco', href: 'scorm/player.html' });
  // every file listed is in the package, and every file of the package is listed
  expect(res.files.sort()).toEqual(packed.filter((p) => p !== 'imsmanifest.xml').sort());
  for (const f of ['scorm/player.html', 'scorm/player.js', 'attention.js', 'gen/attention_core.mjs', 'gen/attention_core.wasm', 'stepper/stepper.css']) expect(res.files).toContain(f);
  // nothing of the site the player does not load: no tests, no sources, no other pages, no GPT
  for (const f of packed) expect(f).not.toMatch(/^(tests|src|train)\/|\.(cpp|h|md)$|^index\.html$|gpt_core|^embed\.html$/);
});

test('the command names the exercise at fault, and writes nothing', async () => {
  const out = path.join(pkg.tmp, 'bad.zip');
  let err = null;
  try {
    execFileSync('node', ['scripts/scorm.mjs', '-o', out, 'exercise=identity-softmax', 'preset=causal-4&exercise=mine'], { cwd: ROOT, stdio: 'pipe' });
  } catch (e) {
    err = e;
  }
  expect(err?.status).toBe(1);
  expect(String(err.stderr)).toContain('exercise 2 ("preset=causal-4&exercise=mine") names no exercise');
  expect(fs.existsSync(out)).toBe(false);
});

test('the author mode downloads the same package: it runs in the LMS', async ({ page }) => {
  await ready(page);
  await page.locator('select[data-key="preset"]').selectOption('two-token');
  await page.locator('select[data-key="exercise"]').selectOption('custom');
  // nothing asked yet: no package, and the author is told why
  await page.getByRole('button', { name: 'Download as a SCORM package' }).click();
  await expect(page.locator('.aps-exercise-result')).toHaveText('Pick the cells to ask first: a package needs at least one question.');
  await page.locator('figure[data-panel="scores"] td[data-r="1"][data-c="0"]').click();
  await expect(page.locator('.aps-exercise')).toContainText('1 cell asked.');
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download as a SCORM package' }).click()]);
  expect(download.suggestedFilename()).toBe('Exercise.zip');
  await expect(page.locator('.aps-exercise-result')).toContainText('Exercise.zip');
  const zip = path.join(pkg.tmp, 'author.zip');
  await download.saveAs(zip);
  expect(execFileSync('unzip', ['-tq', zip], { encoding: 'utf8' })).toMatch(/^No errors detected/);
  const dir = path.join(pkg.tmp, 'author');
  execFileSync('unzip', ['-q', zip, '-d', dir]);
  expect(fs.readFileSync(path.join(dir, 'imsmanifest.xml'), 'utf8')).toContain('adlcp:scormtype="sco" href="scorm/player.html"');
  // a learner in the LMS: S[2,1] = q2·k1 = 0
  const host = await startHost({
    pages: { '/lms.html': lmsPage('/author/scorm/player.html') },
    folders: { '/author/': dir, '/scorm-again/': path.join(ROOT, 'node_modules/scorm-again/dist') },
  });
  try {
    await page.goto(host.url('/lms.html'));
    const sco = page.frameLocator('#sco');
    const cell = sco.locator('figure[data-panel="scores"] td[data-r="1"][data-c="0"] input.aps-answer');
    await expect(cell).toBeVisible({ timeout: BOOT_MS });
    await expect(sco.getByText('Exercise 1 of 1')).toBeVisible();
    await cell.fill('0');
    await sco.getByRole('button', { name: 'Check answers' }).click();
    await expect(sco.locator('.aps-exercise-result')).toContainText('All 1 right');
    await expect.poll(async () => (await events(page)).at(-1)).toEqual({ event: 'commit', status: 'passed', raw: '100' });
  } finally {
    await host.close();
  }
});

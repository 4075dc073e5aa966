// gpt-lab.spec.mjs — <gpt-lab> (web/gpt-lab.js) and its iframe page (web/lab-embed.html), as a
// course author places them and a learner uses them: an element with attributes trains for N steps
// and says so in its events, with the map the lesson names enlarged; the sections attribute shows
// and hides sections; a lab without autostart waits for its Start button; a bad setting is named;
// removing the element terminates its workers; two labs on one page keep their own ids and runs;
// the page's styles do not reach into the lab nor the lab's out of it. The iframe page posts its
// run to the origin its report-to names and to no other. Every wait is on a state or an event.
import { test as base, expect, BOOT_MS, RUN_MS } from './fixtures.mjs';
import path from 'node:path';
import { startHost } from './hosts.mjs';

const test = base.extend({
  host: async ({}, use) => {
    // the course's own copy of the course-side helper (embed-results.js), as an author installs it
    const host = await startHost({ folders: { '/kit/': path.resolve('web') } });
    await use(host);
    await host.close();
  },
});

const PORT = Number(process.env.PORT || 8080);
const TOOL = `http://127.0.0.1:${PORT}`;
const CSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; img-src 'self' data: blob:";

/**
 * A course page on the tool's origin (so the element's worker may start) holding `body`, under the
 * strict CSP, with the element's script and a course stylesheet that styles buttons and headings
 * loudly (to see that it does not reach into the lab). Served by a route, at /course-lab.html.
 */
async function coursePage(page, body) {
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${CSP}">
<title>A lesson</title><link rel="icon" href="data:,">
<link rel="stylesheet" href="/course-test.css">
<script type="module" src="/gpt-lab.js"></script></head>
<body><h2 id="course-h">The lesson's own heading</h2><button id="course-btn" type="button">The course's button</button>${body}</body></html>`;
  await page.addInitScript(recordAll);
  await page.route(`${TOOL}/course-lab.html`, (r) => r.fulfill({ contentType: 'text/html; charset=utf-8', body: html }));
  await page.route(`${TOOL}/course-test.css`, (r) => r.fulfill({ contentType: 'text/css', body: 'button { background: rgb(255, 0, 255); } h2 { color: rgb(0, 128, 0); }' }));
  await page.goto(`${TOOL}/course-lab.html`);
}

/** In the page before its scripts: every lab's events, from the first, in window.__ev[id]: [{type, detail}]. */
function recordAll() {
  window.__ev = {};
  for (const t of ['ready', 'progress', 'done', 'diverged', 'maps', 'error']) {
    document.addEventListener(`gpt-lab-${t}`, (e) => { (window.__ev[e.target.id] ??= []).push({ type: t, detail: e.detail }); });
  }
}
const events = (page, id, type) => page.evaluate(([id, type]) => (window.__ev[id] ?? []).filter((e) => e.type === type).map((e) => e.detail), [id, type]);

test('an element with attributes trains for its steps, says so in its events, and enlarges the head the lesson names', async ({ page }) => {
  await coursePage(page, '<gpt-lab id="lab" task="reverse" steps="40" seed="3" eval-interval="10" sections="training maps" layer="2" head="3" autostart></gpt-lab>');
  const lab = page.locator('gpt-lab#lab');
  await expect(lab).toHaveAttribute('data-status', 'done', { timeout: RUN_MS });
  const done = await events(page, 'lab', 'done');
  expect(done).toHaveLength(1);
  expect(done[0]).toMatchObject({ step: 40, steps: 40 });
  expect(done[0].loss).toBeGreaterThan(0);
  expect(done[0].val).toBeGreaterThan(0);
  // progress: in order, up to the last step, each with the run's length
  const progress = await events(page, 'lab', 'progress');
  expect(progress.length).toBeGreaterThan(0);
  expect(progress.at(-1).step).toBe(40);
  for (let i = 1; i < progress.length; i++) expect(progress[i].step).toBeGreaterThan(progress[i - 1].step);
  for (const p of progress) expect(p.steps).toBe(40);
  expect(await events(page, 'lab', 'diverged')).toEqual([]);
  expect(await events(page, 'lab', 'error')).toEqual([]);
  // the learner sees the training section's status, and the maps with layer 2, head 3 enlarged
  await expect(lab.locator('#tr-status')).toHaveText('Done: 40 steps.');
  await expect(lab.locator('.tr-zoom-caption')).toContainText('Layer 2, head 3.', { timeout: BOOT_MS });
  await expect(lab.locator('.tr-map.is-zoomed')).toHaveAttribute('data-layer', '1');
  await expect(lab.locator('.tr-map.is-zoomed')).toHaveAttribute('data-head', '2');
  await expect.poll(() => events(page, 'lab', 'maps')).toEqual([expect.objectContaining({ layer: 2, head: 3, step: 40 })]);
  // the headings carry no page numbers, and the training page's "Start again" is the lab's
  await expect(lab.getByRole('heading', { level: 2 })).toHaveText(['Training', 'Attention maps']);
  await expect(lab.getByRole('button', { name: 'Start again' })).toBeEnabled();
  // no generation section here: the samples' line names no "generation below"
  const hint = lab.locator('#tr-training').getByText(/steps the model continues/);
  await expect(hint).toHaveText(/^Every \d+ steps the model continues “.*” greedily\.$/);
  // the lesson's address is the course's: the lab wrote nothing into it
  expect(new URL(page.url()).hash).toBe('');
  // another head, by attribute, after the run
  await lab.evaluate((e) => e.setAttribute('head', '1'));
  await expect(lab.locator('.tr-zoom-caption')).toContainText('Layer 2, head 1.');
});

test('the sections attribute shows and hides sections; the styles stay on their side', async ({ page }) => {
  await coursePage(page, '<gpt-lab id="lab" task="copy" steps="30" sections="training generation"></gpt-lab>');
  const lab = page.locator('gpt-lab#lab');
  await expect(lab).toHaveAttribute('data-status', 'idle', { timeout: BOOT_MS });
  const h2 = lab.getByRole('heading', { level: 2 });
  await expect(h2).toHaveText(['Training', 'Generation with the KV cache']);
  await expect(lab.locator('#tr-training').getByText(/steps the model continues/)).toContainText('(the same prompt as in generation below)');
  // the author changes them: the page's order, whatever the attribute's
  await lab.evaluate((e) => e.setAttribute('sections', 'maps data'));
  await expect(h2).toHaveText(['Data and model', 'Attention maps']);
  await lab.evaluate((e) => e.setAttribute('sections', 'all'));
  await expect(h2).toHaveCount(10); // … the runs kept in this browser, and taking the model apart
  await expect(lab.getByRole('heading', { name: /kept in this browser/ })).toBeVisible();
  await lab.evaluate((e) => e.setAttribute('sections', 'training'));
  await expect(h2).toHaveText(['Training']);
  // the course's rules for button and h2 do not reach the lab; the lab's do not reach the course
  const labBtn = lab.getByRole('button', { name: 'Start training' });
  const bg = (l) => l.evaluate((e) => getComputedStyle(e).backgroundColor);
  expect(await bg(labBtn)).not.toBe('rgb(255, 0, 255)');
  expect(await h2.first().evaluate((e) => getComputedStyle(e).color)).not.toBe('rgb(0, 128, 0)');
  expect(await bg(page.locator('#course-btn'))).toBe('rgb(255, 0, 255)');
  expect(await page.locator('#course-h').evaluate((e) => getComputedStyle(e).color)).toBe('rgb(0, 128, 0)');
  expect(await page.evaluate(() => document.querySelectorAll('link[rel=stylesheet]').length)).toBe(1);
  expect(await page.evaluate(() => document.getElementById('tr-status'))).toBeNull(); // its ids are its own
});

test('lang="zh": the lab speaks Chinese from its first words, and follows its lang attribute both ways', async ({ page }) => {
  await page.addInitScript(() => {
    // the lab's first words, whatever comes after them (its loading line, in its shadow root)
    customElements.whenDefined('gpt-lab').then(() => {
      const lab = document.getElementById('lab');
      const seen = () => {
        const p = lab.shadowRoot?.querySelector('.gl-boot, #tr-status');
        if (p && p.textContent && window.firstWords === undefined) window.firstWords = p.textContent;
        else if (window.firstWords === undefined) requestAnimationFrame(seen);
      };
      seen();
    });
  });
  const lab = page.locator('gpt-lab#lab');
  // an English lab told to speak Chinese: its strings load, then it redraws in Chinese
  await coursePage(page, '<gpt-lab id="lab" task="sort" steps="25" sections="training"></gpt-lab>');
  await expect(lab).toHaveAttribute('data-status', 'idle', { timeout: BOOT_MS });
  await expect(lab.locator('#tr-status')).toHaveText('Ready. Press “Start training”.');
  await page.evaluate(() => document.getElementById('lab').setAttribute('lang', 'zh'));
  await expect(lab.locator('#tr-status')).toHaveText('就绪。请按“开始训练”。');
  await expect(lab.getByRole('button', { name: '开始训练' })).toBeVisible();
  await page.evaluate(() => document.getElementById('lab').setAttribute('lang', 'en'));
  await expect(lab.locator('#tr-status')).toHaveText('Ready. Press “Start training”.');
  // a Chinese lab: Chinese from its first words
  await coursePage(page, '<gpt-lab id="lab" lang="zh" task="sort" steps="25" sections="training"></gpt-lab>');
  await expect(lab).toHaveAttribute('data-status', 'idle', { timeout: BOOT_MS });
  await expect(lab.locator('#tr-status')).toHaveText('就绪。请按“开始训练”。');
  expect(await page.evaluate(() => window.firstWords)).toMatch(/[\u4e00-\u9fff]/);
});

test('without autostart the lab waits for its Start button; with bad settings it names the field', async ({ page }) => {
  await coursePage(page, `<gpt-lab id="a" task="sort" steps="25" sections="training"></gpt-lab>
<gpt-lab id="b" task="copy" steps="2x" sections="data training" autostart></gpt-lab>`);
  const a = page.locator('gpt-lab#a');
  const b = page.locator('gpt-lab#b');
  await expect(a).toHaveAttribute('data-status', 'idle', { timeout: BOOT_MS });
  await expect(a.locator('#tr-status')).toHaveText('Ready. Press “Start training”.');
  await expect(a.locator('[data-stat="step"] dd')).toHaveText('—');
  // the learner presses Start
  await a.getByRole('button', { name: 'Start training' }).click();
  await expect(a).toHaveAttribute('data-status', 'done', { timeout: RUN_MS });
  expect((await events(page, 'a', 'done')).map((d) => d.step)).toEqual([25]);
  // b's steps are "2x": it did not start, said why (the field named), and shows it beside the field
  await expect.poll(() => events(page, 'b', 'error'), { timeout: BOOT_MS }).toHaveLength(1);
  const [err] = await events(page, 'b', 'error');
  expect(err.fields).toEqual(['steps']);
  expect(err.message).toContain('steps: “2x” is not a number.');
  await expect(b).toHaveAttribute('data-status', 'idle');
  await expect(b.locator('#tr-err-steps')).toHaveText('“2x” is not a number.');
  await expect(b.getByLabel('Steps', { exact: true })).toHaveAttribute('aria-invalid', 'true');
  // the two labs' ids do not collide: each has its own #tr-status
  await expect(b.locator('#tr-status')).toHaveText('Fix the settings marked above before training.');
  await expect(a.locator('#tr-status')).toHaveText('Done: 25 steps.');
  // the author fixes the attribute: the form follows, and Start trains
  await b.evaluate((e) => e.setAttribute('steps', '12'));
  await expect(b.getByLabel('Steps', { exact: true })).toHaveValue('12');
  await b.getByRole('button', { name: 'Start training' }).click();
  await expect(b).toHaveAttribute('data-status', 'done', { timeout: RUN_MS });
  await expect(b.locator('#tr-status')).toHaveText('Done: 12 steps.');
});

test('a run that diverges says where, in the core\'s words; a text alone makes the task "text"', async ({ page }) => {
  await coursePage(page, `<gpt-lab id="lab" softmax="naive" lr="0.05" steps="200" batch-size="8" eval-interval="10" sample-every="0" sections="training" autostart></gpt-lab>
<gpt-lab id="txt" text="the cat sat on the mat. the dog sat on the log. the cat saw the dog and the dog saw the cat." block-size="8" sections="data training"></gpt-lab>`);
  const txt = page.locator('gpt-lab#txt');
  await expect(txt).toHaveAttribute('data-status', 'idle', { timeout: BOOT_MS });
  await expect(txt.locator('#tr-f-task')).toHaveValue('text');
  await expect(txt.locator('#tr-f-text')).toHaveValue(/^the cat sat on the mat\./);
  const lab = page.locator('gpt-lab#lab');
  await expect(lab).toHaveAttribute('data-status', 'diverged', { timeout: RUN_MS });
  const div = await events(page, 'lab', 'diverged');
  expect(div).toHaveLength(1);
  const { step, steps, message } = div[0];
  expect(Number.isInteger(step) && step >= 1 && step <= 200).toBe(true);
  expect(steps).toBe(200);
  expect(message).toContain(`at step ${step}`);
  expect(message).toContain('naive softmax');
  expect(await events(page, 'lab', 'done')).toEqual([]);
  await expect(lab.locator('#tr-alert')).toContainText(`diverged at step ${step}`);
});

test('removing the element terminates its worker; destroy() does the same and stays destroyed', async ({ page }) => {
  const workers = [];
  page.on('worker', (w) => workers.push(w));
  await coursePage(page, '<gpt-lab id="lab" task="copy" steps="20000" sections="training"></gpt-lab><gpt-lab id="other" steps="20000" sections="training"></gpt-lab>');
  const lab = page.locator('gpt-lab#lab');
  await expect(lab).toHaveAttribute('data-status', 'idle', { timeout: BOOT_MS });
  await expect(page.locator('gpt-lab#other')).toHaveAttribute('data-status', 'idle', { timeout: BOOT_MS });
  // each lab's training worker (the helper workers that share its steps, shard-worker.js, are its own)
  const mains = () => workers.filter((w) => w.url() === `${TOOL}/train/worker.js`);
  expect(mains()).toHaveLength(2);
  await lab.getByRole('button', { name: 'Start training' }).click();
  await expect(lab).toHaveAttribute('data-status', 'training', { timeout: BOOT_MS });
  for (const w of workers) expect(w.url()).toMatch(/\/train\/(shard-)?worker\.js$/);
  expect(mains()).toHaveLength(2);
  // one of the two workers closes when the training lab leaves the page
  const closed = Promise.race(mains().map((w) => new Promise((resolve) => w.once('close', () => resolve(w)))));
  await page.evaluate(() => document.getElementById('lab').remove());
  const gone = await closed;
  // the other lab goes on: its worker answers
  const other = page.locator('gpt-lab#other');
  await other.getByRole('button', { name: 'Start training' }).click();
  await expect(other).toHaveAttribute('data-status', 'training', { timeout: BOOT_MS });
  // destroy(): the worker closes, the status says so, nothing is shown, start() refuses
  const otherClosed = new Promise((resolve) => mains().find((w) => w !== gone).once('close', resolve));
  await other.evaluate((e) => e.destroy());
  await otherClosed;
  await expect(other).toHaveAttribute('data-status', 'destroyed');
  expect(await other.evaluate((e) => e.shadowRoot.childElementCount)).toBe(0);
  expect(await other.evaluate((e) => e.start().then(() => 'started', (err) => err.message))).toBe('the lab was destroyed');
});

const got = (page) => page.evaluate(() => window.__got);
const labMessages = async (page) => (await got(page)).filter((m) => String(m.data?.type).startsWith('gpt-lab:'));

/** A course page on the host's origin framing the lab page with `hash`. */
async function frameLab(page, host, hash) {
  // every message the page receives, from before the frame loads, in window.__got
  host.pages['/course.html'] = `<!doctype html><title>course</title>
<script>window.__got = []; addEventListener('message', (e) => window.__got.push({ origin: e.origin, data: e.data }));</script>
<iframe id="f" title="Train a tiny GPT" src="${TOOL}/lab-embed.html#${hash}" width="1000" height="600"></iframe>
<script type="module">
  import { onLabMessage } from '/kit/embed-results.js';
  window.__course = [];
  onLabMessage('${TOOL}', (m, frame) => window.__course.push({ ...m, frame: frame.id }));
</script>`;
  await page.goto(host.url('/course.html'));
  return page.frames().find((f) => f.url().startsWith(`${TOOL}/lab-embed.html`));
}

test('the iframe page posts the run to the origin report-to names: progress, done, and the status when asked', async ({ page, host }) => {
  const frame = await frameLab(page, host, `task=copy&steps=15&sections=training&autostart&report-to=${encodeURIComponent(host.origin)}`);
  await expect.poll(() => frame.evaluate(() => window.__lab?.element.status), { timeout: RUN_MS }).toBe('done');
  await expect.poll(async () => (await labMessages(page)).some((m) => m.data.type === 'gpt-lab:done'), { timeout: BOOT_MS }).toBe(true);
  const msgs = await labMessages(page);
  for (const m of msgs) expect(m.origin).toBe(TOOL);
  const done = msgs.filter((m) => m.data.type === 'gpt-lab:done');
  expect(done).toHaveLength(1);
  expect(done[0].data).toMatchObject({ status: 'done', step: 15, steps: 15, message: '' });
  expect(Object.keys(done[0].data).sort()).toEqual(['loss', 'message', 'status', 'step', 'steps', 'type', 'val']);
  expect(msgs.filter((m) => m.data.type === 'gpt-lab:progress').at(-1).data.step).toBe(15);
  // the frame's height reached the course page (the stepper's protocol)
  expect((await got(page)).some((m) => m.data?.type === 'attention-stepper:height' && m.data.height > 100)).toBe(true);
  // the course asks for the status: the answer comes to it
  await page.evaluate((tool) => { window.__got = []; document.getElementById('f').contentWindow.postMessage({ type: 'gpt-lab:request-status' }, tool); }, TOOL);
  await expect.poll(async () => (await labMessages(page)).map((m) => m.data)).toEqual([expect.objectContaining({ type: 'gpt-lab:status', status: 'done', step: 15, steps: 15 })]);
  // the course page's helper (embed-results.js onLabMessage) had each, checked field by field, with its frame
  const course = await page.evaluate(() => window.__course);
  expect(course.filter((m) => m.type === 'done')).toEqual([{ ...done[0].data, type: 'done', frame: 'f' }]);
  expect(course.at(-1)).toMatchObject({ type: 'status', status: 'done', step: 15, frame: 'f' });
});

test('a page on an origin report-to does not name receives nothing but the height', async ({ page, host }) => {
  const frame = await frameLab(page, host, `task=copy&steps=10&sections=training&autostart&report-to=${encodeURIComponent('http://course.example')}`);
  await expect.poll(() => frame.evaluate(() => window.__lab?.element.status), { timeout: RUN_MS }).toBe('done');
  // it asks for the status too: no answer to an unnamed origin
  await page.evaluate(() => document.getElementById('f').contentWindow.postMessage({ type: 'gpt-lab:request-status' }, '*'));
  // every message the frame posted so far has arrived once a height asked for now has
  await page.evaluate(() => { window.__got.push({ data: { type: 'drain' } }); document.getElementById('f').contentWindow.postMessage({ type: 'attention-stepper:request-height' }, '*'); });
  await expect.poll(async () => {
    const all = await got(page);
    return all.slice(all.findIndex((m) => m.data?.type === 'drain') + 1).some((m) => m.data?.type === 'attention-stepper:height');
  }).toBe(true);
  expect(await labMessages(page)).toEqual([]);
  expect((await got(page)).every((m) => m.data?.type === 'attention-stepper:height' || m.data?.type === 'drain')).toBe(true);
});

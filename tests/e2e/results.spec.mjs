// results.spec.mjs — an exercise's result out of a cross-origin iframe (embed.html#…&report-to=…,
// web/embed-results.js on the course page), as a course author and a learner meet it: the quiz
// page on one origin (course.localhost) frames the stepper from another (127.0.0.1); the learner
// answers wrong, then right, shows the answers, resets; the gradebook follows, asks for the current
// results, and never sees an expected value. A page on a third origin (a second server,
// hosts.mjs) that frames the same exercise naming the course's origin receives nothing but
// heights; a frame without report-to posts nothing but its height; the course page's listeners
// ignore a look-alike origin, an opaque one and a window that is not one of its frames. (Chromium
// resolves *.localhost to the loopback address itself, so the playground's server serves the tool
// and the course.)
import { test as base, expect, BOOT_MS } from './fixtures.mjs';
import { startHost } from './hosts.mjs';

/** `host`: a second server, on an origin of its own, for the test's course or stranger page. */
const test = base.extend({
  host: async ({}, use) => {
    const host = await startHost();
    await use(host);
    await host.close();
  },
});

const PORT = Number(process.env.PORT || 8080);
const TOOL = `http://127.0.0.1:${PORT}`;
const COURSE = `http://course.localhost:${PORT}`;
const MESSAGE_KEYS = ['empty', 'id', 'reset', 'revealed', 'right', 'score', 'solved', 'total', 'type', 'wrong'].sort();

const cell = (frame, r, c) => frame.locator(`figure[data-panel="weights"] td[data-r="${r}"][data-c="${c}"] input.aps-answer`);

/**
 * Answers the identity softmax exercise in a frame: {"r,c": text}, then checks with Enter in the
 * last cell (the task's "Enter or Check answers"). By the keyboard, not a click on the button: the
 * frame is cross-origin (its own renderer process), the button is 2,000 px above the cells, and a
 * pointer click right after that scroll once checked nothing on a CI machine (the gradebook kept
 * the first check's counts; not reproduced in 30 runs here, so the cause is a guess: the click
 * placed by the other process's stale geometry). Keys go to the focused element, with no hit test.
 * The button's click is tested where the frame is not cross-origin (exercise.spec) and in
 * csp.spec and scorm.spec.
 */
async function answerAndCheck(frame, answers) {
  let last = null;
  for (const [k, v] of Object.entries(answers)) {
    const [r, c] = k.split(',').map(Number);
    last = cell(frame, r, c);
    await last.fill(v);
  }
  await last.press('Enter');
}

/** Records every message the page's window receives (origin and data) in window.__got. */
async function recordMessages(page) {
  await page.evaluate(() => {
    window.__got = [];
    window.addEventListener('message', (e) => window.__got.push({ origin: e.origin, data: e.data }));
  });
}
const got = (page) => page.evaluate(() => window.__got);

/**
 * Waits until every message a frame posted so far has arrived: asks it for its height and waits
 * for that answer (one window's messages arrive in the order they were posted), so a result it
 * posted before would be in window.__got by then. A wait on a state, not on the clock.
 */
async function drain(page, frameId) {
  await page.evaluate((id) => {
    window.__got.push({ origin: 'drain', data: { type: 'drain' } });
    document.getElementById(id).contentWindow.postMessage({ type: 'attention-stepper:request-height' }, '*');
  }, frameId);
  await expect.poll(async () => {
    const all = await got(page);
    const mark = all.findLastIndex((m) => m.data?.type === 'drain');
    return all.slice(mark + 1).some((m) => m.data?.type === 'attention-stepper:height');
  }).toBe(true);
}

test('a cross-origin quiz page records the learner\'s results; it can ask for them; no expected value travels', async ({ page }) => {
  await page.goto(`${COURSE}/examples/results.html?tool=${encodeURIComponent(TOOL)}`);
  await recordMessages(page);
  const frame = page.frameLocator('#quiz-softmax');
  await expect(cell(frame, 0, 0)).toBeVisible({ timeout: BOOT_MS });
  // the frame is on the tool's origin and names the course's
  const src = await page.locator('#quiz-softmax').getAttribute('src');
  expect(src.startsWith(`${TOOL}/embed.html#exercise=identity-softmax`)).toBe(true);
  expect(src).toContain(`report-to=${encodeURIComponent(COURSE)}`);

  const gradebook = page.locator('#gradebook tbody tr[data-frame="quiz-softmax"] td');
  const row = page.locator('#gradebook tbody tr[data-frame="quiz-causal"] td');
  // the page asked each frame as it loaded: both answered, nothing checked yet
  await expect(gradebook).toHaveText(['Exercise: the softmax by hand', '0', '0', '4', '0 %', 'not checked']);
  await expect(row.nth(5)).toHaveText('not checked');
  await page.evaluate(() => { window.__got = []; });
  // a wrong answer: 3 of 4 right
  await answerAndCheck(frame, { '0,0': '0.6698', '0,1': '0.35', '1,0': '0.3302', '1,1': '0.6698' });
  await expect(gradebook).toHaveText(['Exercise: the softmax by hand', '3', '1', '0', '75 %', 'in progress']);
  // the right one: solved
  await answerAndCheck(frame, { '0,1': '0.3302' });
  await expect(gradebook).toHaveText(['Exercise: the softmax by hand', '4', '0', '0', '100 %', 'solved']);

  // the messages: exactly the counts and flags, from the tool's origin, never a cell or a value
  const results = (await got(page)).filter((m) => m.data?.type === 'attention-stepper:exercise');
  expect(results.length).toBe(2);
  for (const m of results) {
    expect(m.origin).toBe(TOOL);
    expect(Object.keys(m.data).sort()).toEqual(MESSAGE_KEYS);
    expect(JSON.stringify(m.data)).not.toMatch(/0\.6697|0\.3302|0\.6698|expected|cells/);
  }
  expect(results[0].data).toEqual({ type: 'attention-stepper:exercise', id: 'identity-softmax', total: 4, right: 3, wrong: 1, empty: 0, solved: false, revealed: false, reset: false, score: 0.75 });
  expect(results[1].data).toMatchObject({ right: 4, wrong: 0, solved: true, score: 1 });

  // the second exercise (in Chinese): the learner shows the answers, then resets
  const causal = page.frameLocator('#quiz-causal');
  // its buttons by the keyboard too (focus, Enter), for the reason answerAndCheck gives
  await causal.getByRole('button', { name: '显示答案' }).press('Enter');
  await expect(row.nth(5)).toHaveText('answers shown');
  await causal.getByRole('button', { name: '重置' }).press('Enter');
  await expect(row.nth(5)).toHaveText('started again');
  await expect(row.nth(3)).toHaveText('4'); // row 3 of the 4×4 weights: four cells, all empty again

  // the course asks for the current results: both answer
  await page.evaluate(() => { window.__got = []; });
  await page.getByRole('button', { name: 'Ask the exercises for their results now' }).click();
  await expect.poll(async () => (await got(page)).filter((m) => m.data?.type === 'attention-stepper:exercise').length).toBe(2);
  const answers = (await got(page)).filter((m) => m.data?.type === 'attention-stepper:exercise').map((m) => m.data);
  expect(answers).toContainEqual({ type: 'attention-stepper:exercise', id: 'identity-softmax', total: 4, right: 4, wrong: 0, empty: 0, solved: true, revealed: false, reset: false, score: 1 });
  expect(answers).toContainEqual(expect.objectContaining({ id: 'quiz-row3', total: 4, right: 0, solved: false }));
});

test('a page on another origin that frames the exercise naming the course receives nothing but heights', async ({ page, host }) => {
  // a page on a third origin frames the very iframe a course would, report-to naming the course
  const embed = `${TOOL}/embed.html#exercise=identity-softmax&report-to=${encodeURIComponent(COURSE)}`;
  host.pages['/host.html'] = `<!doctype html><title>elsewhere</title><iframe id="f" title="stepper" src="${embed}" width="900" height="700"></iframe>`;
  await page.goto(host.url('/host.html'));
  await recordMessages(page);
  const frame = page.frameLocator('#f');
  await expect(cell(frame, 0, 0)).toBeVisible({ timeout: BOOT_MS });
  await answerAndCheck(frame, { '0,0': '0.6698', '0,1': '0.35', '1,0': '0.3302', '1,1': '0.6698' });
  await expect(frame.locator('.aps-exercise-result')).toContainText('3 of 4 right');
  await answerAndCheck(frame, { '0,1': '0.3302' });
  await expect(frame.locator('.aps-exercise-result')).toContainText("All 4 right");
  await frame.getByRole('button', { name: 'Reset' }).click();
  // it asks, as the course would
  await page.evaluate(() => document.getElementById('f').contentWindow.postMessage({ type: 'attention-stepper:request-result' }, '*'));
  await frame.getByRole('button', { name: 'Show the answers' }).click();
  await expect(frame.locator('.aps-exercise-result')).not.toHaveText('');
  // the frame is alive and talking (its heights arrive), but no result ever reached this page
  await drain(page, 'f');
  const types = new Set((await got(page)).map((m) => m.data?.type));
  expect([...types].sort()).toEqual(['attention-stepper:height', 'drain']);
});

test('a frame without report-to posts its height and nothing else; the hash keeps report-to when it is rewritten', async ({ page, host }) => {
  // the course is the second server's page; one frame names it, the other names no one
  host.pages['/host.html'] = `<!doctype html><title>course</title>
    <iframe id="plain" title="plain" src="${TOOL}/embed.html#exercise=identity-softmax" width="900" height="700"></iframe>
    <iframe id="named" title="named" src="${TOOL}/embed.html#exercise=identity-softmax&report-to=${encodeURIComponent(host.origin)}" width="900" height="700"></iframe>`;
  await page.goto(host.url('/host.html'));
  await recordMessages(page);
  const plain = page.frameLocator('#plain');
  await expect(cell(plain, 0, 0)).toBeVisible({ timeout: BOOT_MS });
  await answerAndCheck(plain, { '0,0': '0.6698', '0,1': '0.3302', '1,0': '0.3302', '1,1': '0.6698' });
  await expect(plain.locator('.aps-exercise-result')).toContainText("All 4 right");
  await page.evaluate(() => document.getElementById('plain').contentWindow.postMessage({ type: 'attention-stepper:request-result' }, '*'));
  await drain(page, 'plain');
  expect((await got(page)).filter((m) => m.data?.type === 'attention-stepper:exercise')).toEqual([]);
  // the named frame: it reports, and its rewritten hash (a permalink now) still names the course
  const named = page.frameLocator('#named');
  await expect(cell(named, 0, 0)).toBeVisible({ timeout: BOOT_MS });
  await answerAndCheck(named, { '0,0': '0.5' });
  await expect.poll(async () => (await got(page)).filter((m) => m.data?.type === 'attention-stepper:exercise').length).toBe(1);
  const fromNamed = (await got(page)).filter((m) => m.data?.type === 'attention-stepper:exercise');
  expect(fromNamed[0].origin).toBe(TOOL);
  expect(fromNamed[0].data).toMatchObject({ id: 'identity-softmax', right: 0, wrong: 1, empty: 3 });
  const namedUrl = page.frames().find((f) => f.url().includes('report-to')).url();
  expect(namedUrl).toMatch(/#s=1\.[A-Za-z0-9_-]+&report-to=http%3A%2F%2F127\.0\.0\.1%3A\d+$/);
  expect(decodeURIComponent(namedUrl.split('report-to=')[1])).toBe(host.origin);
});

test('report-to takes exact origins only, and says which values it left out', async ({ page }) => {
  await page.goto('/embed.html#preset=identity');
  const r = await page.evaluate(async () => {
    const { reportOrigins } = await import('/embed-state.js');
    const warned = [];
    const hash = '#exercise=x&report-to=' + encodeURIComponent('https://Course.Example:443 https://example.org/path javascript:alert(1) http://a.test:8080, https://u:p@b.test *');
    return { origins: reportOrigins(hash, (m) => warned.push(m)), warned };
  });
  expect(r.origins).toEqual(['https://course.example', 'http://a.test:8080']);
  expect(r.warned).toHaveLength(4);
  for (const bad of ['https://example.org/path', 'javascript:alert(1)', 'https://u:p@b.test', '*']) {
    expect(r.warned.some((w) => w.includes(`"${bad}"`) && w.includes('not an origin'))).toBe(true);
  }
});

test('onExerciseResult and onLabMessage ignore a look-alike origin, an opaque ("null") one and a window that is not one of the page\'s frames', async ({ page }) => {
  // The tool is a second server with pages that post a result and a lab report to the top window
  // (each labelled with its frame's hash); the course (`host`) listens for two tool origins: the
  // tool's own, and http://tool.localhost, of which http://tool.localhost.evil.localhost:PORT (the
  // tool's server under a longer name: Chromium resolves *.localhost to the loopback) is a
  // look-alike, as https://course.example.evil is of https://course.example. The course's server
  // serves web/ under /web/ for embed-results.js.
  const tool = await startHost({
    pages: {
      '/post.html': `<!doctype html><title>poster</title><script>
        const label = location.hash.slice(1);
        top.postMessage({ type: 'attention-stepper:exercise', id: label, total: 4, right: 4, wrong: 0, empty: 0, solved: true, revealed: false, reset: false, score: 1 }, '*');
        top.postMessage({ type: 'gpt-lab:done', status: 'done', step: 5, steps: 5, loss: 1.25, val: 1.5, message: label }, '*');
      </script>`,
      '/nest.html': '<!doctype html><title>nest</title><iframe src="/post.html#nested"></iframe>',
    },
  });
  try {
    const lookalike = tool.origin.replace('127.0.0.1', 'tool.localhost.evil.localhost');
    const frames = [
      ['trusted', tool.url('/post.html#trusted'), false],
      ['lookalike', `${lookalike}/post.html#lookalike`, false],
      ['opaque', tool.url('/post.html#opaque'), true],  // sandboxed without allow-same-origin: origin "null"
      ['nest', tool.url('/nest.html'), false],  // its inner frame posts from the tool's origin, but is no frame of this page
    ];
    const pages = {};
    pages['/course.html'] = `<!doctype html><title>course</title><script type="module">
      import { onExerciseResult, onLabMessage } from '/web/embed-results.js';
      window.__raw = []; window.__results = []; window.__lab = [];
      addEventListener('message', (e) => window.__raw.push({ origin: e.origin, label: e.data.id ?? e.data.message }));
      const tools = [${JSON.stringify(tool.origin)}, 'http://tool.localhost'];
      onExerciseResult(tools, (r, f) => window.__results.push([f.id, r.id]));
      onLabMessage(tools, (m, f) => window.__lab.push([f.id, m.message]));
      for (const [id, src, sandboxed] of ${JSON.stringify(frames)}) {
        const f = document.createElement('iframe');
        f.id = id;
        if (sandboxed) f.sandbox = 'allow-scripts';
        f.src = src;
        document.body.append(f);
      }
    </script>`;
    const webDir = new URL('../../web/', import.meta.url).pathname;
    const course = await startHost({ pages, folders: { '/web/': webDir } });
    try {
      await page.goto(course.url('/course.html'));
      // every poster's two messages have arrived (the listeners ran on each as it came)
      await expect.poll(() => page.evaluate(() => window.__raw.length)).toBe(8);
      const raw = await page.evaluate(() => window.__raw);
      const originOf = (label) => raw.find((m) => m.label === label).origin;
      expect(originOf('trusted')).toBe(tool.origin);
      expect(originOf('lookalike')).toBe(lookalike);
      expect(originOf('opaque')).toBe('null');
      expect(originOf('nested')).toBe(tool.origin);
      // only the trusted frame's messages reach the callbacks
      expect(await page.evaluate(() => window.__results)).toEqual([['trusted', 'trusted']]);
      expect(await page.evaluate(() => window.__lab)).toEqual([['trusted', 'trusted']]);
    } finally {
      await course.close();
    }
  } finally {
    await tool.close();
  }
});

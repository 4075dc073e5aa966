// web_server.mjs — what the browser benchmarks (stepper_bench.mjs, train_bench.mjs,
// chromium_bench.mjs) share: Chromium's launch options, a static server of web/ on a free port, a
// page benchmark's start and stop (runPageBench), and the transfer size of one page.
// Limits: 127.0.0.1 only; the server is scripts/web-server.mjs (http-server without caching; the
// same files cross-origin isolated under /isolated/).
import { chromium } from 'playwright-core';
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Debian's Chromium, headless, without the background traffic that would blur the timings. */
export const LAUNCH = {
  executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
};

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** Serves `webDir` (relative to the repository) on a free port: { url, stop() }. */
export async function startServer(webDir = 'web') {
  const port = await freePort();
  const bin = fileURLToPath(new URL('../scripts/web-server.mjs', import.meta.url));
  const child = spawn(process.execPath, [bin, '--root', webDir, '--port', String(port)], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr.on('data', (d) => { err += d; });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    if (child.exitCode !== null) throw new Error(`http-server exited: ${err}`);
    try {
      const r = await fetch(`${url}/`);
      if (r.ok) return { url, stop: () => new Promise((res) => { child.once('exit', res); child.kill('SIGTERM'); }) };
    } catch { /* not up yet */ }
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill('SIGTERM');
  throw new Error('http-server did not start');
}

/**
 * Runs a page benchmark: serves `webDir`, launches Chromium, awaits `body({ browser, url })`, then
 * stops both whatever happened. An error is printed and sets the exit code (a benchmark's failure
 * is not a number: the numbers themselves never fail).
 */
export async function runPageBench(webDir, body) {
  let server = null;
  let browser = null;
  try {
    server = await startServer(webDir);
    browser = await chromium.launch(LAUNCH);
    await body({ browser, url: server.url });
  } catch (e) {
    console.error(e);
    process.exitCode = 1;
  } finally {
    await browser?.close();
    await server?.stop();
  }
}

/**
 * Every file a page (and its workers: the context sees their requests too) fetched from `url`,
 * with raw and gzip -9 sizes: Map(url → { raw, gz }). `ready(page)` waits for what the page must
 * have loaded; then the network is idle and `settleMs` pass.
 */
export async function transfer(context, url, path, { ready, settleMs = 300 } = {}) {
  const page = await context.newPage();
  const files = new Map();
  const onResponse = async (r) => {
    const u = r.url();
    if (!u.startsWith(url)) return;
    try {
      const body = await r.body();
      files.set(u, { raw: body.length, gz: gzipSync(body, { level: 9 }).length });
    } catch { /* redirects have no body */ }
  };
  // the network's quiet kept here, not page.waitForLoadState('networkidle'): Playwright's can lose
  // the idle state for good when a request ends before DOMContentLoaded, and then waits forever
  const open = new Set();
  let last = Date.now();
  const onRequest = (r) => { open.add(r); last = Date.now(); };
  const onDone = (r) => { open.delete(r); last = Date.now(); };
  context.on('request', onRequest);
  context.on('requestfinished', onDone);
  context.on('requestfailed', onDone);
  context.on('response', onResponse);
  await page.goto(`${url}${path}`);
  if (ready) await ready(page);
  for (const t0 = Date.now(); open.size > 0 || Date.now() - last < 500;) {
    if (Date.now() - t0 > 600_000) throw new Error(`transfer: ${path}: requests still open after 10 minutes: ${[...open].map((r) => r.url()).join(', ')}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  await page.waitForTimeout(settleMs);
  context.off('request', onRequest);
  context.off('requestfinished', onDone);
  context.off('requestfailed', onDone);
  context.off('response', onResponse);
  await page.close();
  return files;
}

// Playwright: end-to-end tests of the page in Debian's Chromium (nothing is downloaded).
import { defineConfig } from '@playwright/test';

const PORT = Number(process.env.PORT || 8080);

export default defineConfig({
  testDir: './tests/e2e', // keep Playwright away from the node:test files in tests/wasm
  outputDir: './test-results',
  // Hang guards, not budgets: a test waits on states (an attribute, a count, the runtime), never on
  // the clock, and these only end one that waits for a state that never comes. A machine loaded by
  // other jobs is several times slower than an idle one (loading a wasm module, a training run);
  // that must not fail a test, so they are generous. Waits on a page's boot or on a training run
  // take their own, longer ones (BOOT_MS, RUN_MS in tests/e2e/fixtures.mjs). Timing is measured
  // by the benchmarks (bench/), which print and never fail.
  timeout: 600_000,
  expect: { timeout: 30_000 },
  // Two tests at a time: the tests share no port, folder or storage (extra servers listen on port
  // 0, every test has its own browser context), and the whole suite passed this way at a load of 30.
  // Two keep a 2-core machine's cores 97% busy: a third gained 2% in a quiet A/B (2026-12-02).
  // scripts/test's step table prints how busy every CI run's steps kept the cores.
  workers: 2,
  // Tests, not files, are what the workers share out, so a long file at the end (train.spec's
  // ~200 s) does not run alone while the other worker has finished. The few files whose beforeAll
  // builds a file (a model, the package) keep their tests in one worker (mode 'default').
  fullyParallel: true,
  reporter: 'list',
  use: {
    baseURL: `http://127.0.0.1:${PORT}`,
    browserName: 'chromium',
    headless: true,
    launchOptions: {
      // Playwright adds --headless and a fresh temporary --user-data-dir itself.
      executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
      args: [
        '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
        '--disable-background-networking', '--disable-component-update', '--disable-sync',
      ],
    },
  },
  webServer: {
    // web/ as a static host serves it, and under /isolated/ with COOP + COEP (scripts/web-server.mjs)
    command: `node scripts/web-server.mjs --port ${PORT}`,
    url: `http://127.0.0.1:${PORT}/`,
    reuseExistingServer: !process.env.CI,
    timeout: 30_000,
  },
});

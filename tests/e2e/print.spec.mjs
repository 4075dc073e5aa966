// print.spec.mjs — printing the stepper (web/stepper/print.js and stepper.css's @media print):
// page.pdf() in Chromium (which fires beforeprint and turns the print media query on, as Ctrl+P
// and "Save as PDF" do), then the PDF's text read by pdftotext (Debian's poppler-utils, in
// scripts/setup's list): every panel's numbers are there, panels 3–8 included, even in the
// step-by-step view, where the screen shows one step and the other panels were never painted;
// after printing the step view is back as it was. In 中文 too.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { test, expect, panelText } from './fixtures.mjs';
import { ready } from './stepper-helpers.mjs';

const PDFTOTEXT = '/usr/bin/pdftotext';
// panels 3–8 of the forward pass (context.js STEPS): S/√d_k, + mask, softmax, A·V, concat, ·W_o
const LATE = ['scaled', 'masked', 'weights', 'context', 'concat', 'out'];

async function printed(page, testInfo, name) {
  const path = testInfo.outputPath(`${name}.pdf`);
  await writeFile(path, await page.pdf({ format: 'A4', printBackground: true }));
  // -layout keeps a row's numbers on one line, in order, as the panel shows them
  return execFileSync(PDFTOTEXT, ['-layout', path, '-']).toString().replace(/[ \t]+/g, ' ');
}

for (const lang of ['en', 'zh']) {
  test(`printing the step-by-step view (${lang}) shows every panel's numbers, then the view is back`, async ({ page }, testInfo) => {
    test.skip(!existsSync(PDFTOTEXT), 'no pdftotext: scripts/setup installs poppler-utils');
    await ready(page, lang === 'zh' ? '/#lang=zh' : '/');
    await page.locator('select[data-key="preset"]').selectOption('kv-cache');
    // what each panel shows, row by row, read in the all-steps view
    const want = {};
    for (const p of LATE) want[p] = await panelText(page, p);
    for (const p of LATE) expect(want[p].length, p).toBeGreaterThan(0);
    // the step view: step 1 only; the late panels are not on the page
    await page.locator('[data-key="view.step"]').click();
    await expect(page.locator('figure[data-panel="weights"]')).toBeHidden();
    const text = await printed(page, testInfo, `stepper-${lang}`);
    for (const p of LATE) {
      for (const row of want[p]) expect(text, `panel ${p}, row ${row.join(' ')}`).toContain(` ${row.join(' ')}`);
    }
    // the numbers' panels keep their titles (a reader of the PDF knows which is which)
    expect(text).toContain(lang === 'zh' ? 'softmax' : 'softmax (A)');
    // after printing: the step view as it was, its state untouched
    await expect(page.locator('figure[data-panel="weights"]')).toBeHidden();
    expect(await page.evaluate(() => window.attentionStepper.getState().view)).toBe('step');
  });
}

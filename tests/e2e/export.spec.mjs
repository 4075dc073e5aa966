// export.spec.mjs — the training page's pictures for slides (web/common/export.js), driven as a learner
// does: after a short run, the loss chart and the next-token bars save as SVG (parsed by the
// browser's DOMParser as image/svg+xml: no parsererror, an <svg> root, the legend's and the axes'
// text) and as PNG (the IHDR's width and height are the size the page states, twice the SVG's);
// 中文 labels in the 中文 page; an experiment's chart, two runs overlaid, with both in its legend.
// (The attention maps' and the model view's pictures: model-view.spec.mjs.)
import { readFile } from 'node:fs/promises';
import { test, expect, RUN_MS } from './fixtures.mjs';
import { trained } from './train-helpers.mjs';

/** Saves a figure by its group's SVG and PNG buttons; checks both; → the SVG's text content. */
async function saveBoth(page, group, file, stated) {
  const [svgD] = await Promise.all([page.waitForEvent('download'), group.getByRole('button', { name: 'SVG' }).click()]);
  expect(svgD.suggestedFilename()).toBe(`${file}.svg`);
  const svg = await readFile(await svgD.path(), 'utf8');
  const parsed = await page.evaluate((text) => {
    const doc = new DOMParser().parseFromString(text, 'image/svg+xml');
    const root = doc.documentElement;
    return { error: doc.getElementsByTagName('parsererror').length, root: root.localName, ns: root.namespaceURI, w: root.getAttribute('width'), h: root.getAttribute('height'), text: root.textContent };
  }, svg);
  expect(parsed.error).toBe(0);
  expect(parsed.root).toBe('svg');
  expect(parsed.ns).toBe('http://www.w3.org/2000/svg');
  const [pngD] = await Promise.all([page.waitForEvent('download'), group.getByRole('button', { name: 'PNG' }).click()]);
  expect(pngD.suggestedFilename()).toBe(`${file}.png`);
  const png = await readFile(await pngD.path());
  expect([...png.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  expect(png.subarray(12, 16).toString('latin1')).toBe('IHDR');
  const [w, h] = [png.readUInt32BE(16), png.readUInt32BE(20)];
  expect([w, h]).toEqual([2 * Number(parsed.w), 2 * Number(parsed.h)]);
  await expect(stated).toHaveText(new RegExp(`${file}\\.png.*${w} × ${h}`));
  return parsed.text;
}

test('the loss chart and the next-token bars save as SVG and PNG with their legends', async ({ page }) => {
  await trained(page, '#steps=30&batch_size=4&sample_every=0&next_prompt=abc%3D');
  const chartGroup = page.getByRole('group', { name: 'Save the loss chart as a picture' }).first();
  const chartText = await saveBoth(page, chartGroup, 'loss-chart', chartGroup.locator('xpath=following-sibling::span[@role="status"]'));
  for (const s of ['Loss per step', 'step', 'loss (nats)', 'training loss', 'validation loss']) expect(chartText).toContain(s);

  const next = page.getByRole('region', { name: '7 · The next token' });
  await expect(next.locator('#tr-next-facts')).toContainText('before top-k 5');
  const barsGroup = next.getByRole('group', { name: 'Save the next-token bars as a picture' });
  const barsText = await saveBoth(page, barsGroup, 'next-token', barsGroup.locator('xpath=following-sibling::span[@role="status"]'));
  for (const s of ['Next token after “abc=”', 'Probability', 'Logit', 'probability it is drawn with', 'before top-k / top-p', 'dropped']) expect(barsText).toContain(s);
});

test('an experiment’s overlaid loss curves save as one picture with both runs in its legend', async ({ page }) => {
  await trained(page, '#steps=12&batch_size=4&sample_every=0');
  await page.getByRole('button', { name: 'Strict vs inclusive mask (exercise 2)' }).click();
  await expect(page.locator('#app')).toHaveAttribute('data-exp', 'done', { timeout: RUN_MS });
  const exp = page.getByRole('region', { name: '4 · Experiments from the tutorials' });
  const group = exp.getByRole('group', { name: 'Save the loss chart as a picture' });
  const text = await saveBoth(page, group, 'loss-chart', group.locator('xpath=following-sibling::span[@role="status"]'));
  for (const run of ['strict j > i', 'inclusive j ≥ i']) {
    expect(text).toContain(`${run}: training loss`);
    expect(text).toContain(`${run}: validation loss`);
  }
});

test('中文: the chart’s picture has 中文 labels', async ({ page }) => {
  await trained(page, '#lang=zh&steps=12&batch_size=4&sample_every=0');
  const group = page.getByRole('group', { name: '把损失图保存为图片' }).first();
  const text = await saveBoth(page, group, 'loss-chart', group.locator('xpath=following-sibling::span[@role="status"]'));
  for (const s of ['每一步的损失', '训练损失', '验证损失']) expect(text).toContain(s);
});

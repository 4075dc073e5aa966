// next-token.spec.mjs — the training page's next-token section in Chromium, driven as a learner
// does (by labels, roles and visible text): after a short run, the bars for a prompt's next token
// (a visible mark for the newline), probabilities that are the softmax of the logits shown at the
// temperature shown, the temperature slider sharpening them, top-k and top-p keeping what they say
// with the dropped probability and the entropy shown; a prompt with an unknown character gets the
// core's message; 中文; no horizontal overflow at 375, 1366 and 1920 px (screenshots kept in the
// test's output folder). Waits are on states (the facts line naming the options answered).
import { test, expect } from './fixtures.mjs';
import { trained } from './train-helpers.mjs';

/** The bars as the page shows them: token, kept, p and p before top-k/top-p (from the cell's title), logit. */
async function bars(page) {
  const table = page.getByRole('table', { name: 'The most likely next tokens' });
  return table.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => {
    const title = tr.children[1].title;
    const nums = [...title.matchAll(/[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?/g)].map((m) => Number(m[0]));
    return {
      token: tr.children[0].textContent,
      kept: !tr.classList.contains('is-dropped'),
      p: tr.classList.contains('is-dropped') ? 0 : nums[0],
      full: nums[nums.length - 1],
      shown: tr.querySelector('.tr-next-p').textContent,
      logit: Number(tr.children[2].textContent),
    };
  }));
}

const facts = (page) => page.locator('#tr-next-facts');

test('the next token: bars from the core, reshaped by temperature, top-k and top-p', async ({ page }, testInfo) => {
  await trained(page, '#steps=60&batch_size=4&sample_every=0&next_prompt=abc%3D');
  const section = page.getByRole('region', { name: '7 · The next token' });
  await expect(section).toBeVisible();
  await expect(section.getByRole('status').filter({ hasText: 'The model at step' })).toContainText('after the 4 tokens “abc=”');
  // the copy task's 12 characters, all shown (fewer than the 16 bars); the newline has its mark
  await expect(facts(page)).toContainText('of 12 tokens kept');
  const table = page.getByRole('table', { name: 'The most likely next tokens' });
  await expect(table.locator('tbody tr')).toHaveCount(12);
  await expect(table.getByRole('rowheader', { name: '↵' })).toHaveCount(1);
  // default: top-k 5 at temperature 1
  await expect(facts(page)).toContainText('before top-k 5');
  let b = await bars(page);
  const keptK = b.filter((x) => x.kept);
  expect(keptK.length).toBeGreaterThanOrEqual(5); // ties with the 5th stay too
  expect(b.slice(0, keptK.length).every((x) => x.kept)).toBe(true); // the most likely are the kept
  expect(Math.abs(keptK.reduce((s, x) => s + x.p, 0) - 1)).toBeLessThan(1e-3);
  // the probabilities before top-k are the softmax of the logits shown (to their 3 decimals)
  const z = b.reduce((s, x) => s + Math.exp(x.logit - b[0].logit), 0);
  for (const x of b) expect(Math.abs(x.full - Math.exp(x.logit - b[0].logit) / z)).toBeLessThan(2e-3);
  // the dropped probability shown is what the dropped bars had
  const dropped = b.filter((x) => !x.kept).reduce((s, x) => s + x.full, 0);
  const shownDropped = Number((await facts(page).textContent()).match(/dropped probability ([\d.]+)%/)[1]) / 100;
  expect(Math.abs(shownDropped - dropped)).toBeLessThan(2e-3);
  // the entropy of the whole distribution (before top-k), at this temperature
  const entropyAt = async () => Number((await facts(page).textContent()).match(/\(([\d.]+) before/)[1]);
  const h1 = await entropyAt();

  // a colder temperature sharpens: the top token's probability rises, the entropy falls
  const temp = section.getByRole('slider', { name: 'Temperature' });
  await temp.focus();
  for (let i = 0; i < 10; i++) await page.keyboard.press('ArrowLeft');
  await expect(facts(page)).toContainText('temperature 0.5');
  b = await bars(page);
  expect(b[0].p).toBeGreaterThan(keptK[0].p);
  expect(await entropyAt()).toBeLessThan(h1);
  await temp.fill('1');
  await expect(facts(page)).toContainText('temperature 1');

  // top-k 1: one token, probability 1, entropy 0
  await section.getByRole('slider', { name: 'k (tokens kept)' }).fill('1');
  await expect(facts(page)).toContainText('before top-k 1');
  b = await bars(page);
  if (b[1].full < b[0].full) {
    await expect(facts(page)).toContainText('Entropy 0.000 nats');
    expect(b.filter((x) => x.kept)).toHaveLength(1);
    expect(b[0].shown).toBe('100%');
  }

  // top-p 0.6: the fewest most likely tokens whose probabilities reach 0.6
  await section.getByRole('radio', { name: 'the top p' }).click();
  await expect(section.getByRole('slider', { name: 'k (tokens kept)' })).toBeHidden();
  await section.getByRole('slider', { name: 'p (probability kept)' }).fill('0.6');
  await expect(facts(page)).toContainText('before top-p 0.6');
  b = await bars(page);
  const n = b.filter((x) => x.kept).length;
  expect(b.slice(0, n).every((x) => x.kept)).toBe(true);
  expect(b.slice(0, n).reduce((s, x) => s + x.full, 0)).toBeGreaterThanOrEqual(0.6 - 2e-3);
  expect(b.slice(0, n - 1).reduce((s, x) => s + x.full, 0)).toBeLessThan(0.6 + 2e-3);
  await section.screenshot({ path: testInfo.outputPath('next-token.png') });

  // a character the model does not know: the core's message beside the prompt, no bars
  const prompt = section.getByLabel('Prompt');
  await prompt.fill('abZ');
  await expect(section.locator('#tr-err-next_prompt')).toContainText('"Z"');
  await expect(table.locator('tbody tr')).toHaveCount(0);
  await prompt.fill('cab=');
  await expect(section.getByRole('status').filter({ hasText: 'The model at step' })).toContainText('“cab=”');
  await expect(table.locator('tbody tr')).toHaveCount(12);
  await expect(section.locator('#tr-err-next_prompt')).toBeEmpty();

  // 中文
  await page.locator('#tr-lang-zh').click();
  const zh = page.getByRole('region', { name: '7 · 下一个词元' });
  await expect(zh.getByRole('table', { name: '最可能的下一个词元' }).locator('tbody tr')).toHaveCount(12);
  await expect(zh.locator('#tr-next-facts')).toContainText('熵');
  await expect(zh.getByRole('radio', { name: '前 p 的概率' })).toHaveAttribute('aria-checked', 'true');
});

test('one set of sampling settings: the panel says what generation draws with, and sets it (en, zh)', async ({ page }, testInfo) => {
  await trained(page, '#steps=10&batch_size=4&sample_every=0&next_prompt=abc%3D&gen_prompt=cabej%3D&gen_max=2');
  const section = page.getByRole('region', { name: '7 · The next token' });
  const gen = page.getByRole('region', { name: '9 · Generation with the KV cache' });
  const says = section.locator('#tr-next-gen');
  const use = section.getByRole('button', { name: 'Generate with these settings' });
  // generation starts greedy: the panel says so, beside its own sliders
  await expect(says).toHaveText('Generation draws with its own settings: greedy (always the most likely token) — not these bars.');
  await expect(gen.locator('#tr-gen-draws')).toContainText('Each new token: greedy (always the most likely token).');
  // temperature 1.25 and top-p 0.9 above, then given to generation
  await section.getByRole('slider', { name: 'Temperature' }).fill('1.25');
  await section.getByRole('radio', { name: 'the top p' }).click();
  await section.getByRole('slider', { name: 'p (probability kept)' }).fill('0.9');
  await expect(facts(page)).toContainText('before top-p 0.9');
  await expect(says).toContainText('its own settings');
  await use.click();
  await expect(says).toHaveText('Generation draws with these settings: temperature 1.25, top-p 0.9.');
  await expect(use).toBeDisabled();
  await expect(gen.getByRole('checkbox', { name: /Greedy/ })).not.toBeChecked();
  await expect(gen.getByLabel('Temperature')).toHaveValue('1.25');
  await expect(gen.getByLabel('Top-p (1: all)')).toHaveValue('0.9');
  await expect(gen.getByLabel('Top-k (0: all)')).toHaveValue('0');
  await expect(gen.locator('#tr-gen-draws')).toContainText('Each new token: temperature 1.25, top-p 0.9.');
  // generation draws with them: its first token's distribution names them
  await gen.getByRole('button', { name: 'Run the prompt' }).click();
  await gen.getByRole('button', { name: 'Next token' }).click();
  const drawn = gen.getByRole('region', { name: /^New token 1,/ });
  await expect(drawn).toContainText('temperature 1.25');
  await expect(drawn).toContainText('top-p 0.9');
  await section.screenshot({ path: testInfo.outputPath('next-token-link.png') });
  // a field changed below: the panel says they differ again
  await gen.getByLabel('Temperature').fill('0.7');
  await expect(says).toHaveText('Generation draws with its own settings: temperature 0.7, top-p 0.9 — not these bars.');
  await expect(use).toBeEnabled();
  await page.locator('#tr-lang-zh').click();
  await expect(page.locator('#tr-next-gen')).toHaveText('生成用它自己的设置：温度 0.7，top-p 0.9——不是这些柱状图的设置。');
  await expect(page.getByRole('button', { name: '用这些设置生成' })).toBeEnabled();
});

test('the next-token section at phone, laptop and projector widths, English and 中文: no horizontal overflow', async ({ page }, testInfo) => {
  await trained(page, '#steps=10&batch_size=4&sample_every=0&next_prompt=abc%3D');
  for (const lang of ['en', 'zh']) {
    if (lang === 'zh') {
      // the switch fetches the strings, then renders the page anew and the bars are asked again:
      // wait for the Chinese bars, or the screenshot below could catch the English ones leaving
      await page.locator('#tr-lang-zh').click();
      await expect(page.locator('html')).toHaveAttribute('lang', 'zh-CN');
      await expect(page.locator('#tr-next-facts')).toContainText('熵');
    }
    for (const [w, h] of [[375, 800], [1366, 900], [1920, 1080]]) {
      await page.setViewportSize({ width: w, height: h });
      const section = page.locator('#tr-next');
      await expect(section.locator('tbody tr')).toHaveCount(12);
      const over = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      expect(over, `${lang} ${w} px`).toBeLessThanOrEqual(0);
      const inner = await section.evaluate((e) => e.scrollWidth - e.clientWidth);
      expect(inner, `${lang} ${w} px, inside the section`).toBeLessThanOrEqual(1);
      await section.screenshot({ path: testInfo.outputPath(`next-token-${lang}-${w}.png`) });
    }
  }
});

test('generation: each new token carries its probability; choosing one shows what it was drawn from and the draw', async ({ page }, testInfo) => {
  await trained(page, '#steps=60&batch_size=4&sample_every=0&gen_prompt=cabej%3D&gen_max=4&gen_greedy=false&gen_temperature=1.3&gen_top_k=6&gen_top_p=0.8');
  const gen = page.getByRole('region', { name: '9 · Generation with the KV cache' });
  await gen.getByRole('button', { name: 'Run the prompt' }).click();
  for (let n = 1; n <= 3; n++) {
    await gen.getByRole('button', { name: 'Next token' }).click();
    await expect(gen.getByRole('button', { name: new RegExp(`^New token ${n}, .* drawn with probability`) })).toBeVisible();
  }
  // the newest draw is shown; choose the second
  await expect(gen.getByRole('region', { name: /^New token 3,/ })).toBeVisible();
  const second = gen.getByRole('button', { name: /^New token 2, / });
  await second.click();
  await expect(second).toHaveAttribute('aria-pressed', 'true');
  const drawn = gen.getByRole('region', { name: /^New token 2,/ });
  await expect(drawn).toContainText('top-k 6, top-p 0.8');
  await expect(drawn).toContainText('temperature 1.3');
  const [tok, p] = (await second.textContent()).split(' ');
  // the bars it was drawn from: the drawn token is marked, with the probability the button says
  const table = drawn.getByRole('table', { name: 'The distribution new token 2 was drawn from' });
  const row = table.locator('tbody tr.is-drawn');
  await expect(row).toHaveCount(1);
  await expect(row.locator('th')).toHaveText(tok);
  await expect(row.locator('.tr-next-p')).toHaveText(p);
  const kept = await table.locator('tbody tr:not(.is-dropped)').count();
  expect(kept).toBeGreaterThanOrEqual(1);
  expect(kept).toBeLessThanOrEqual(12);
  // the draw: coin = u × S falls in the token's segment [from, to)
  const text = await drawn.locator('.tr-kv-explain').textContent();
  const m = text.match(/u = ([\d.e-]+) gives the coin u × ([\d.e-]+) = ([\d.e-]+), which falls in “(.+)”’s segment \[([\d.e-]+), ([\d.e-]+)\)/);
  expect(m, text).not.toBeNull();
  const [u, sum, coin, , from, to] = [1, 2, 3, 4, 5, 6].map((i) => (i === 4 ? m[i] : Number(m[i])));
  expect(m[4]).toBe(tok);
  expect(Math.abs(u * sum - coin)).toBeLessThan(1e-3 * Math.max(1, coin));
  expect(from).toBeLessThanOrEqual(coin);
  expect(coin).toBeLessThan(to);
  expect(Math.abs((to - from) / sum - Number(p.replace('%', '')) / 100)).toBeLessThan(1e-3);
  for (const w of [375, 1366]) {
    await page.setViewportSize({ width: w, height: 900 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth), `${w} px`).toBeLessThanOrEqual(0);
    await gen.screenshot({ path: testInfo.outputPath(`generation-draw-${w}.png`) });
  }
});

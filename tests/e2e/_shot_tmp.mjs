import { chromium } from '@playwright/test';
const [,, preset, out, lang = 'en', width = '1366'] = process.argv;
const b = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
const p = await b.newPage({ viewport: { width: Number(width), height: 900 } });
const errs = [];
p.on('pageerror', (e) => errs.push(String(e)));
p.on('console', (m) => { if (m.type() === 'error') errs.push(m.text()); });
await p.addInitScript((l) => localStorage.setItem('attention-playground.lang', l), lang);
await p.goto('http://127.0.0.1:8406/');
await p.waitForSelector('#app[data-status="ready"]');
await p.selectOption('select[data-key="preset"], #app select >> nth=0', preset).catch(async (e) => { console.log('select fail', e.message); });
await p.waitForTimeout(1000);
if (process.env.BW) { await p.getByRole('radiogroup', { name: 'Pass' }).getByRole('radio', { name: 'Backward (gradients)' }).click(); await p.waitForTimeout(1500); }
if (process.env.HOVER) { const [pn, r, c] = process.env.HOVER.split(','); await p.locator(`figure[data-panel="${pn}"] td[data-r="${r}"][data-c="${c}"]`).focus(); await p.waitForTimeout(500); console.log('EXPLAIN', await p.locator('.aps-explain').innerText()); }
console.log(await p.evaluate(() => [...document.querySelectorAll('figure[data-panel]')].filter(f => f.offsetParent).map(f => f.dataset.panel).join(',')));
console.log(await p.evaluate(() => [...document.querySelectorAll('.aps-note')].filter(f => f.offsetParent && f.textContent).map(f => f.textContent).slice(0, 30).join('\n')));
console.log('errors', errs);
const sel = process.argv[6] || 'flash_m';
const f = p.locator(`figure[data-panel="${sel}"]`);
await f.scrollIntoViewIfNeeded();
await p.waitForTimeout(800);
const box = { y: await f.evaluate((e) => e.getBoundingClientRect().top + window.scrollY) };
await p.screenshot({ path: out, clip: { x: 0, y: Math.max(0, box.y - 20), width: Number(width), height: 880 }, fullPage: true });
await b.close();

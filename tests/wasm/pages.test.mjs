// pages.test.mjs — the standalone pages scripts/pages.mjs writes: one source in web/pages/ for each
// page it declares and no other, each written page its head and its source, with the strict CSP
// meta in the document and every stylesheet and script it names present under web/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { CSP, PAGES, pageText, writePages } from '../../scripts/pages.mjs';
import { ROOT } from './load.mjs';

const WEB = path.join(ROOT, 'web');
const sources = (dir = '') => fs.readdirSync(path.join(WEB, 'pages', dir), { withFileTypes: true })
  .flatMap((e) => (e.isDirectory() ? sources(path.posix.join(dir, e.name)) : [path.posix.join(dir, e.name)]));

test('a source in web/pages/ for each page and no other', () => {
  assert.deepEqual(sources().sort(), Object.keys(PAGES).sort());
});

test('each page is written from its head and its source, with the CSP in the document', async () => {
  await writePages();
  for (const page of Object.keys(PAGES)) {
    const text = fs.readFileSync(path.join(WEB, page), 'utf8');
    assert.equal(text, pageText(page, fs.readFileSync(path.join(WEB, 'pages', page), 'utf8')), page);
    assert.equal(text.split('<head>').length, 2, `${page}: one <head>`);
    assert.equal(text.split('<body').length, 2, `${page}: one <body>`);
    const csp = text.indexOf(`<meta http-equiv="Content-Security-Policy" content="${CSP}`);
    assert.ok(csp > 0 && csp < text.indexOf('</head>'), `${page}: the CSP in its head`);
    assert.ok(!/<script(?![^>]*\bsrc=)(?![^>]*type="application\/json")/.test(text), `${page}: no inline script (the CSP refuses it)`);
    for (const [, ref] of text.matchAll(/(?:href|src)="(\.{1,2}\/[^"#?]*)"/g)) {
      if (ref.endsWith('/')) continue;  // a link to a page's folder
      const file = path.join(WEB, path.dirname(page), ref);
      if (file.includes(`${path.sep}gen${path.sep}`)) continue;  // build output (scripts/build wasm)
      assert.ok(fs.existsSync(file), `${page} names ${ref}, which is not under web/`);
    }
  }
  assert.deepEqual(await writePages({ check: true }), []);
});

test('--check names a stale page and exits 1; a run writes it again', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pages-'));
  const page = path.join(WEB, 'embed.html');
  const kept = path.join(dir, 'embed.html');
  fs.copyFileSync(page, kept);
  try {
    fs.appendFileSync(page, '<!-- edited by hand -->\n');
    const r = (() => { try { execFileSync('node', ['scripts/pages.mjs', '--check'], { cwd: ROOT, stdio: 'pipe' }); return null; } catch (e) { return e; } })();
    assert.ok(r, '--check passed a stale page');
    assert.equal(r.status, 1);
    assert.match(String(r.stderr), /embed\.html/);
    execFileSync('node', ['scripts/pages.mjs'], { cwd: ROOT });
    assert.equal(fs.readFileSync(page, 'utf8'), fs.readFileSync(kept, 'utf8'));
  } finally {
    fs.copyFileSync(kept, page);
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

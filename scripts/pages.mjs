#!/usr/bin/env node
// scripts/pages.mjs — writes the standalone pages of web/ (web/index.html, web/train/index.html, …)
// from their sources: each page's <head> is declared here once (the document's start, the strict
// CSP meta a static host needs in the document, the title, the stylesheets) and the rest of it (its
// own scripts, then its <body>) is its source in web/pages/, the same path. Every consumer of the
// pages writes them first: scripts/build wasm, scripts/web-server.mjs (scripts/serve and the
// Playwright tests), scripts/pack.mjs (npm run dist) and scripts/scorm.mjs. The written pages are
// build output (.gitignore), as web/gen/ is.
//   node scripts/pages.mjs            writes them (a page whose bytes are the same is not touched)
//   node scripts/pages.mjs --check    writes nothing; exit 1 naming each page that is stale or missing
// Limits: a source is copied as it is (no includes, no escaping): a title here is plain HTML text.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const WEB = fileURLToPath(new URL('../web/', import.meta.url));

/** What every page may load: its own origin only, wasm compiled by the page, images from data:/blob:. */
export const CSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; img-src 'self' data: blob:";

/**
 * The pages, by their path under web/: title, stylesheets (relative to the page), and where a page
 * differs: htmlClass on <html>, frames (the CSP's frame-src), referrer (a referrer meta).
 */
export const PAGES = {
  'index.html': { title: 'The Attention Stepper — Attention Playground', styles: ['./style.css', './stepper/stepper.css'] },
  'train/index.html': {
    title: 'Train a tiny GPT — Attention Playground',
    styles: ['../style.css', '../stepper/stepper.css', '../gen/vendor/uplot.min.css', './train.css'],
  },
  'embed.html': {
    title: 'Attention stepper', htmlClass: 'apx-embed-page', referrer: 'no-referrer',
    styles: ['./stepper/stepper.css', './stepper/share.css'],
  },
  'lab-embed.html': { title: 'Train a tiny GPT', htmlClass: 'apx-embed-page', referrer: 'no-referrer', styles: ['./stepper/share.css'] },
  'scorm/player.html': { title: 'Attention exercises', styles: ['../stepper/stepper.css', './player.css'] },
  'examples/index.html': { title: 'Lesson 3 — Attention, step by step (embedding example)', frames: "'self'", styles: ['./examples.css'] },
  'examples/lab.html': { title: 'Lesson 7 — Train a tiny GPT (embedding example)', frames: "'self'", styles: ['./examples.css'] },
  'examples/results.html': {
    title: 'Quiz with a gradebook — results out of an iframe (embedding example)',
    frames: "'self' http://127.0.0.1:* http://localhost:* http://*.localhost:*",
    styles: ['./examples.css'],
  },
};

/**
 * The page's text: its head from PAGES, then its source: after the source's first line (a comment
 * that names it, not written out) the page's own head lines, then from <body on.
 */
export function pageText(page, source) {
  const p = PAGES[page];
  if (!source.startsWith(`<!-- web/pages/${page} `)) throw new Error(`web/pages/${page} does not start with the comment naming it`);
  source = source.slice(source.indexOf('\n') + 1);
  const body = source.indexOf('<body');
  if (body < 0) throw new Error(`web/pages/${page} has no <body>`);
  const csp = p.frames ? `${CSP}; frame-src ${p.frames}` : CSP;
  return [
    '<!doctype html>',
    `<html lang="en"${p.htmlClass ? ` class="${p.htmlClass}"` : ''}>`,
    '<head>',
    '  <meta charset="utf-8">',
    '  <meta name="viewport" content="width=device-width, initial-scale=1">',
    `  <meta http-equiv="Content-Security-Policy" content="${csp}">`,
    ...(p.referrer ? [`  <meta name="referrer" content="${p.referrer}">`] : []),
    `  <title>${p.title}</title>`,
    '  <link rel="icon" href="data:,">',
    ...p.styles.map((href) => `  <link rel="stylesheet" href="${href}">`),
  ].join('\n') + '\n' + source.slice(0, body) + '</head>\n' + source.slice(body) + '</html>\n';
}

/** Writes every page whose text changed (check: writes nothing); the pages stale or missing. */
export async function writePages({ check = false } = {}) {
  const stale = [];
  for (const page of Object.keys(PAGES)) {
    const text = pageText(page, await readFile(path.join(WEB, 'pages', page), 'utf8'));
    const out = path.join(WEB, page);
    const old = await readFile(out, 'utf8').catch(() => null);
    if (old === text) continue;
    stale.push(page);
    if (check) continue;
    await mkdir(path.dirname(out), { recursive: true });
    await writeFile(out, text);
  }
  return stale;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const check = process.argv.includes('--check');
  const stale = await writePages({ check });
  if (check && stale.length) {
    console.error(`pages: stale or missing (node scripts/pages.mjs writes them): ${stale.join(', ')}`);
    process.exit(1);
  }
}

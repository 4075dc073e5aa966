// docs.test.mjs — the docs name only files that exist: in README.md, bench/README.md and
// docs/*.md, every relative link ([text](path), with its #anchor when it points into a Markdown
// file) and every repository path written in the text (src/…, web/…, tests/…, scripts/…, bench/…,
// docs/…). So a move or a rename that forgets a doc fails here, naming the doc, the line and the
// path.
// Limits: build and run output (web/gen/, build*/, dist/, bench/out*/, the pages scripts/pages.mjs
// writes) is not in a clone and is not checked; a path with a placeholder (<isa>, *, …) is checked as a pattern against the
// repository's files; {a,b} is expanded. Anchors follow GitHub's slugs (lower case, punctuation
// dropped, spaces to '-'). Bare file names (`ui.js` without its folder) are not checked.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { ROOT } from './load.mjs';
import { PAGES } from '../../scripts/pages.mjs';

const DOCS = ['README.md', 'bench/README.md', ...fs.readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
// the repository's files (tracked or new, not ignored): what a clone has
const FILES = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' })
  .split('\n').filter((f) => f && fs.existsSync(path.join(ROOT, f)));
const DIRS = new Set(FILES.flatMap((f) => f.split('/').slice(0, -1).map((_, i, a) => a.slice(0, i + 1).join('/'))));
const BUILT_DIRS = /^(web\/gen|build[^/]*|dist|node_modules|test-results|bench\/out[^/]*|bench\/peers\/node_modules)(\/|$)/;
// build output: those folders, and the pages scripts/pages.mjs writes
const BUILT = { test: (p) => BUILT_DIRS.test(p) || (p.startsWith('web/') && Object.hasOwn(PAGES, p.slice(4))) };

const exists = (p) => FILES.includes(p) || DIRS.has(p.replace(/\/$/, ''));

/** a/{b,c}/d → [a/b/d, a/c/d] */
function expand(p) {
  const m = /\{([^{}]*,[^{}]*)\}/.exec(p);
  if (!m) return [p];
  return m[1].split(',').flatMap((alt) => expand(p.slice(0, m.index) + alt + p.slice(m.index + m[0].length)));
}

/** A path with a placeholder (<name>, *, …) as a pattern over the repository's files. */
function matchesSome(p) {
  if (!/[<*…]/.test(p)) return exists(p);
  const re = new RegExp(`^${p.split(/<[^>]*>|\*|…/).map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('[^/]*')}`);
  return FILES.some((f) => re.test(f)) || [...DIRS].some((d) => re.test(d));
}

/** GitHub's anchor of a heading. */
const slug = (h) => h.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
const anchorsCache = new Map();
function anchors(file) {
  if (!anchorsCache.has(file)) {
    const text = fs.readFileSync(path.join(ROOT, file), 'utf8').replace(/```[\s\S]*?```/g, '');
    const seen = new Map();
    const out = new Set();
    for (const m of text.matchAll(/^#{1,6}\s+(.+)$/gm)) {
      const s = slug(m[1].replace(/`/g, ''));
      const n = seen.get(s) ?? 0;
      seen.set(s, n + 1);
      out.add(n ? `${s}-${n}` : s);
    }
    anchorsCache.set(file, out);
  }
  return anchorsCache.get(file);
}

/** Every problem in one doc: [line, what]. */
function problems(doc) {
  const out = [];
  const lines = fs.readFileSync(path.join(ROOT, doc), 'utf8').split('\n');
  lines.forEach((line, i) => {
    // relative links: [text](target) and ![alt](target)
    for (const m of line.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = m[1];
      if (/^[a-z][a-z+.-]*:/i.test(target)) continue; // https:, mailto:
      const [file, anchor] = target.split('#');
      const resolved = file ? path.posix.normalize(path.posix.join(path.posix.dirname(doc), decodeURIComponent(file))) : doc;
      if (BUILT.test(resolved)) continue;
      if (file && !exists(resolved)) out.push([i + 1, `link ${target}: ${resolved} does not exist`]);
      else if (anchor && resolved.endsWith('.md') && !anchors(resolved).has(anchor)) out.push([i + 1, `link ${target}: no heading #${anchor} in ${resolved}`]);
    }
    // repository paths in the text (in code spans or not), from the repository's root
    for (const m of line.matchAll(/(?<![\w./@-])((?:src|web|tests|scripts|bench|docs)\/[\w./<>{}*,…+-]*)/g)) {
      let p = m[1].replace(/[.,:;)>]+$/, '');
      if (p.includes('{') && !p.includes('}')) continue; // a brace cut by the line's end
      if (BUILT.test(p)) continue;
      for (const q of expand(p)) if (!matchesSome(q)) out.push([i + 1, `path ${q} does not exist`]);
    }
  });
  return out;
}

for (const doc of DOCS) {
  test(`${doc} names only files that exist`, () => {
    const found = problems(doc);
    assert.deepEqual(found.map(([line, what]) => `${doc}:${line}: ${what}`), []);
  });
}

test('the checker finds a missing file, a missing anchor and a missing path', () => {
  const tmp = path.join(ROOT, 'docs', `zz-docs-test-${process.pid}.md`);
  fs.writeFileSync(tmp, '# A\n[ok](../README.md) [bad](../nope.md) [bad anchor](#b) `src/core/no_such.h` and web/nowhere.js\n');
  try {
    const found = problems(path.relative(ROOT, tmp)).map(([, what]) => what);
    assert.deepEqual(found, [
      'link ../nope.md: nope.md does not exist',
      'link #b: no heading #b in ' + path.relative(ROOT, tmp),
      'path src/core/no_such.h does not exist',
      'path web/nowhere.js does not exist',
    ]);
  } finally {
    fs.rmSync(tmp);
  }
});

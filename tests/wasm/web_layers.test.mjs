// web_layers.test.mjs — the web folders import one another downwards only: web/common/ (what both
// pages and the SCORM player use) imports nothing outside itself; the stepper (web/stepper/) and
// the training page (web/train/) import neither each other nor the SCORM player (web/scorm/), which
// sits above the stepper. So no circle through two folders can come back (stepper ↔ scorm was one).
// Imports are read the way the packer reads them (web/common/scorm-package.js: references(),
// comments left out), static and import('…') alike.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { references, resolve } from '../../web/common/scorm-package.js';
import { ROOT } from './load.mjs';

const WEB = path.join(ROOT, 'web');
const modules = (dir) => fs.readdirSync(path.join(WEB, dir)).filter((f) => /\.m?js$/.test(f)).map((f) => `${dir}/${f}`);
/** [importer, imported] for every module of the folder (paths from web/). */
const edges = (dir) => modules(dir).flatMap((from) =>
  references(fs.readFileSync(path.join(WEB, from), 'utf8')).map((ref) => [from, resolve(from, ref)]).filter(([, to]) => to && /\.m?js$/.test(to)));
const folder = (p) => (p.includes('/') ? p.slice(0, p.indexOf('/')) : '.');

const RULES = {
  common: ['common'],
  stepper: ['stepper', 'common', '.'],
  train: ['train', 'common', '.', 'gen'],
  scorm: ['scorm', 'stepper', 'common', '.'],
};

for (const [dir, allowed] of Object.entries(RULES)) {
  test(`web/${dir}/ imports only from ${allowed.map((d) => (d === '.' ? 'web/' : `web/${d}/`)).join(', ')}`, () => {
    const found = edges(dir);
    assert.ok(found.length > 0, `no imports read in web/${dir}/`);
    const wrong = found.filter(([, to]) => !allowed.includes(folder(to))).map(([from, to]) => `${from} → ${to}`);
    assert.deepEqual(wrong, []);
    for (const [from, to] of found) assert.ok(fs.existsSync(path.join(WEB, to)) || to.startsWith('gen/'), `${from} imports ${to}, which does not exist`);
  });
}

test('the rule reads a cross import (stepper → scorm) as one', () => {
  const [[from, to]] = references("const { downloadScorm } = await import('../scorm/download.js');").map((r) => ['stepper/exercise-bar.js', resolve('stepper/exercise-bar.js', r)]);
  assert.equal(folder(to), 'scorm');
  assert.ok(!RULES.stepper.includes(folder(to)), `${from} → ${to} is refused`);
});

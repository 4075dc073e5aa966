#!/usr/bin/env node
// scripts/scorm.mjs — builds a SCORM 1.2 package (a .zip an LMS takes: Moodle, Canvas,
// Blackboard, Open edX, …) of one exercise or a sequence of several, as one activity with one
// score. `npm run scorm -- [options] EXERCISE…`; docs/embedding.md, "SCORM packages for an LMS".
//
//   EXERCISE   what embed.html's hash takes: 'exercise=identity-softmax',
//              'preset=causal-4&exercise=row3&ask=weights[3,*]&tolerance=decimals:3', or a
//              permalink (the playground's Copy link, a URL with #s=1.…)
//   -o, --out FILE     the package (default: <the title as a file name>.zip)
//   -t, --title TEXT   the activity's title in the LMS (default: Attention exercises)
//   -l, --lang en|zh   the language of the page (default: en)
//   --json FILE        the activity as JSON instead ({title, lang, exercises: [EXERCISE, …]})
//
// It needs the built wasm core (web/gen/, scripts/build wasm). The package holds imsmanifest.xml
// and the files the player loads, from web/ (web/common/scorm-package.js finds them). Exit 1 with a
// message naming the exercise at fault when an exercise names none.
import { readFile, writeFile } from 'node:fs/promises';
import { deflateRawSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { readActivity } from '../web/common/scorm-activity.js';
import { buildPackage, packageName, LAUNCH } from '../web/common/scorm-package.js';
import { zip } from '../web/common/zip.js';
import { writePages } from './pages.mjs';

const web = fileURLToPath(new URL('../web/', import.meta.url));
const fail = (msg) => { console.error(`scorm: ${msg}`); process.exit(1); };

let args;
try {
  args = parseArgs({
    allowPositionals: true,
    options: {
      out: { type: 'string', short: 'o' },
      title: { type: 'string', short: 't' },
      lang: { type: 'string', short: 'l' },
      json: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
} catch (e) {
  fail(`${e.message} (--help lists the options)`);
}
const { values: opt, positionals } = args;
if (opt.help) {
  console.log((await readFile(fileURLToPath(import.meta.url), 'utf8')).split('\n').slice(1).filter((l, i, a) => a.slice(0, i + 1).every((x) => x.startsWith('//'))).map((l) => l.replace(/^\/\/ ?/, '')).join('\n'));
  process.exit(0);
}
if (opt.lang && !['en', 'zh'].includes(opt.lang)) fail(`--lang: "${opt.lang}" is not en or zh`);

let input = {};
if (opt.json) {
  try { input = JSON.parse(await readFile(opt.json, 'utf8')); } catch (e) { fail(`--json ${opt.json}: ${e.message}`); }
  if (positionals.length) fail('give the exercises in --json or on the command line, not both');
} else {
  input = { exercises: positionals };
}
if (opt.title) input.title = opt.title;
if (opt.lang) input.lang = opt.lang;
if (!Array.isArray(input.exercises) || !input.exercises.length) fail('no exercise given (--help lists the options)');

const activity = readActivity(input);
if (activity.problems.length) fail(activity.problems.join('\n       '));

const site = {
  readText: (p) => readFile(web + p, 'utf8'),
  readBytes: async (p) => new Uint8Array(await readFile(web + p)),
};
let files;
try {
  await writePages();
  files = await buildPackage(activity, site);
} catch (e) {
  if (e.code === 'ENOENT') fail(`${e.path.replace(web, 'web/')} is missing${e.path.includes('/gen/') ? ': build the wasm core first (scripts/build wasm)' : ''}`);
  throw e;
}
const out = opt.out ?? packageName(activity.title);
const bytes = zip(files, { deflateRaw: (b) => new Uint8Array(deflateRawSync(b, { level: 9 })) });
await writeFile(out, bytes);
console.log(`${out}: SCORM 1.2, "${activity.title}", ${activity.exercises.length} exercise${activity.exercises.length === 1 ? '' : 's'} (${activity.exercises.map((e) => e.id).join(', ')}); ${files.length} files, ${(bytes.length / 1024).toFixed(0)} kB; launch ${LAUNCH}`);

// gen-gpt-api.mjs — writes the parts of web/gpt.d.ts and docs/api.md that the calls' table
// (src/api/gpt_calls.h, kGptCalls) declares: each call's method type and its line of the reference.
//
//   node scripts/gen-gpt-api.mjs           rewrite the generated regions (needs web/gen/gpt_core.wasm:
//                                          scripts/build wasm); prints the files it changed
//   node scripts/gen-gpt-api.mjs --check   exit 1, naming the calls, if a region is stale
//
// A region is the text between a line holding `<generated …>` and the next holding `</generated>`
// (comment lines in the .d.ts, HTML comments in the Markdown); everything else of both files is
// hand-written and left alone. regions(table) is what tests/wasm/gpt_calls.test.mjs compares with
// the files, so a row added without running this fails that test naming it. The table comes from
// the wasm module's gpt_calls() (the `calls` call): {calls: [{name, role, args: [{key, kind}],
// results, api, example?, doc, full?, returns?}], results: [{name, type}], stages: [{name, type}]}.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { camelName, derivedMethods } from '../web/gpt.js';

export const ROOT = fileURLToPath(new URL('../', import.meta.url));
export const FILES = { dts: `${ROOT}web/gpt.d.ts`, md: `${ROOT}docs/api.md` };

// An argument's TypeScript type, by its kind (gpt_calls.h's ArgKind): Embind's std::string takes a
// string or a Uint8Array.
const TS = { spec: 'string', json: 'string', text: 'string | Uint8Array', bytes: 'Uint8Array | string', whole: 'number', number: 'number' };
const ARRAY = { float32: 'Float32Array', int32: 'Int32Array' };

const positional = (c) => c.args.filter((a) => a.kind !== 'out');
const method = (c) => (c.role === 'module' ? `gpt_${c.name}` : c.name);

/** One call's line of GptSessionHandle or GptCoreModule. */
function dtsLine(c) {
  const args = positional(c).map((a) => `${a.key}: ${TS[a.kind]}`).join(', ');
  return `  /** ${c.doc.replaceAll('*/', '*\\/')} */\n  ${method(c)}(${args}): ${c.returns === 'bytes' ? 'Uint8Array | null' : 'string'};`;
}

// A cell of a Markdown table: its pipes escaped.
const cell = (s) => s.replaceAll('|', '\\|');

/** gpt api's form of a call: its help's example when that is a call object, else built from its arguments. */
function apiForm(c) {
  if (!c.api) return '—';
  if (c.example?.startsWith('{')) return '`' + cell(c.example) + '`';
  const keys = c.args.map((a) => `,"${a.file ?? a.key}":${a.kind === 'spec' ? '{…}' : '…'}`).join('');
  return '`' + cell(`{"call":"${c.name}"${keys}}`) + '`';
}

// The argument types of a method web/gpt.js derives from a row (its JS values, as run.call takes them).
const JS_TS = { spec: 'Record<string, unknown> | string', json: 'unknown', text: 'string | Uint8Array', bytes: 'Uint8Array', whole: 'number', number: 'number' };

/** The body of `export interface NAME {` in a .d.ts text without its generated regions. */
function handWritten(text, name) {
  const start = text.indexOf(`export interface ${name} {`);
  if (start < 0) return '';
  const body = text.slice(start, text.indexOf('\n}', start));
  return findRegions(body).reduceRight((b, r) => b.slice(0, r.start) + b.slice(r.end), body);
}

/** The derived methods (web/gpt.js's derivedMethods) that the .d.ts does not type by hand. */
function derivedLines(calls, hand) {
  return derivedMethods(calls)
    .filter(({ method }) => !new RegExp(`^  ${method}\\(`, 'm').test(hand))
    .map(({ method, row }) => {
      const args = row.args.filter((a) => a.kind !== 'out').map((a) => `${a.key}: ${JS_TS[a.kind]}`).join(', ');
      return `  /** ${row.doc.replaceAll('*/', '*\\/')} */\n  ${method}(${args}): any;`;
    })
    .join('\n');
}

/**
 * The generated regions, by file and name → text (without the marker lines). dts: the .d.ts text
 * now, whose hand-written methods the derived ones leave out.
 */
export function regions(table, dts = readFileSync(FILES.dts, 'utf8')) {
  const session = table.calls.filter((c) => c.role !== 'module');
  const module = table.calls.filter((c) => c.role === 'module');
  const session_dts = [
    ...session.map(dtsLine),
    '  // the results: NAME() a copy, NAME_view() a view into the heap (valid until the next call into the module)',
    ...table.results.flatMap((r) => [`  ${r.name}(): ${ARRAY[r.type]};`, `  ${r.name}_view(): ${ARRAY[r.type]};`]),
    '  // the staging areas: n values as a view of the heap to write into, then a *_staged call',
    ...table.stages.map((s) => `  ${s.name}(n: number): ${ARRAY[s.type]};`),
  ].join('\n');
  const md = [
    '| call (`gpt api`) | wasm method | what it does and answers |',
    '|---|---|---|',
    ...table.calls.map((c) => {
      const args = positional(c).map((a) => a.key).join(', ');
      return `| ${apiForm(c)} | \`${method(c)}(${args})\` | ${cell(c.doc)} |`;
    }),
  ].join('\n');
  return {
    dts: {
      GptSessionHandle: session_dts,
      GptCoreModule: module.map(dtsLine).join('\n'),
      GptRun: derivedLines(session, handWritten(dts, 'GptRun')),
      Gpt: derivedLines(module, handWritten(dts, 'Gpt')),
    },
    md: { calls: md },
  };
}

/** The regions of a file's text, in order: [{name, start, end}] (start, end: the body's offsets). */
export function findRegions(text) {
  const found = [];
  const re = /^.*<generated ([\w-]+)[^\n]*\n/gm;
  for (let m; (m = re.exec(text)); ) {
    const start = m.index + m[0].length;
    const close = text.indexOf('</generated>', start);
    if (close < 0) throw new Error(`region ${m[1]} has no </generated>`);
    const end = text.lastIndexOf('\n', close) + 1;
    found.push({ name: m[1], start, end });
  }
  return found;
}

/** The file's text with its regions replaced by want (name → body). */
export function rewrite(text, want) {
  let out = '';
  let at = 0;
  const seen = new Set();
  for (const r of findRegions(text)) {
    if (!(r.name in want)) throw new Error(`unknown region ${r.name}`);
    out += text.slice(at, r.start) + (want[r.name] ? want[r.name] + '\n' : '');
    at = r.end;
    seen.add(r.name);
  }
  for (const name of Object.keys(want)) if (!seen.has(name)) throw new Error(`no region ${name}`);
  return out + text.slice(at);
}

/** The calls whose generated lines differ between a file's text and what the table gives. */
export function staleCalls(text, want, table) {
  const now = findRegions(text).map((r) => text.slice(r.start, r.end)).join('\n');
  const lines = Object.values(want).join('\n').split('\n');
  return table.calls.map((c) => c.name).filter((n) => {
    const mine = new RegExp(`(?<!\\w)(${n}|gpt_${n}|${camelName(n)})\\(|"call":"${n}"`);
    return lines.some((l) => mine.test(l) && !now.includes(l));
  });
}

async function main() {
  let wasmBinary;
  try {
    wasmBinary = readFileSync(`${ROOT}web/gen/gpt_core.wasm`);
  } catch {
    console.error('web/gen/gpt_core.wasm is missing: build it first (scripts/build wasm)');
    process.exit(2);
  }
  const { default: createModule } = await import('../web/gen/gpt_core.mjs');
  const table = JSON.parse((await createModule({ wasmBinary })).gpt_calls());
  const want = regions(table);
  const check = process.argv.includes('--check');
  let stale = false;
  for (const [file, path] of Object.entries(FILES)) {
    const text = readFileSync(path, 'utf8');
    const next = rewrite(text, want[file]);
    if (next === text) continue;
    stale = true;
    if (check) console.error(`${path}: stale for ${staleCalls(text, want[file], table).join(', ') || 'the results or stages'}`);
    else {
      writeFileSync(path, next);
      console.log(`wrote ${path}`);
    }
  }
  if (check && stale) process.exit(1);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await main();

// exp-variants.js — the two experiments on the GPT's variants (gpt.h), three runs each from the
// form's settings and one seed, what differs between them, what is measured after training, and
// the view of the measurements:
//  - length: positions learned, ALiBi and RoPE, trained at a context of 32, then the validation
//    loss at each position of windows of 32, 64 and 128 tokens (the core's loss_by_position; for
//    learned positions the core refuses past 32, naming wpe, and the view says so by name);
//  - kv: n_kv_head = n_head, 2 and 1 (grouped-query, multi-query): the KV cache's bytes (the core's
//    run_memory) beside the final validation loss.
// Every number shown is the core's; this file only asks for them and lays them out. The curves
// are an SVG drawn from the numbers (one polyline per run, each with its own dash, named in text).
import { el } from '../common/ui.js';

export const VARIANT_KINDS = ['length', 'kv'];
/** The contexts the length experiment trains at (the first) and evaluates at. */
export const LENGTHS = [32, 64, 128];
const NAMES = ['a', 'b', 'c'];

/** The runs of experiment `kind`: {names, labels, over (each run's spec overrides)}. */
export function variantRuns(kind, t, nHead) {
  if (kind === 'length') {
    const pos = ['learned', 'alibi', 'rope'];
    return { names: NAMES, labels: pos.map((p) => t(`pos.${p}`)), over: pos.map((p) => ({ pos: p, block_size: LENGTHS[0] })) };
  }
  const kv = [nHead, 2, 1];
  return { names: NAMES, labels: kv.map((k) => t('exp.kv.label', { k })), over: kv.map((k) => ({ n_kv_head: k })) };
}

/**
 * What experiment `kind` measures of its trained runs, through the experiments' worker `w`:
 * length → [{label, at: [{context, losses, mean} | {context, error}]}]; kv → [{label, n_kv_head,
 * bytes, val}].
 */
export async function measure(kind, w, ex) {
  const out = [];
  for (let i = 0; i < ex.names.length; i++) {
    const run = ex.names[i];
    if (kind === 'length') {
      const at = [];
      for (const context of LENGTHS) {
        try {
          const r = await w.call('call', { run, call: 'loss_by_position', args: [{ context }] });
          at.push({ context, losses: r.losses, mean: r.mean });
        } catch (e) {
          at.push({ context, error: e.message, field: e.field });
        }
      }
      out.push({ label: ex.labels[i], at });
    } else {
      const m = await w.call('call', { run, call: 'run_memory', args: [] });
      const r = ex.runs[i];
      out.push({ label: ex.labels[i], n_kv_head: ex.over[i].n_kv_head, bytes: m.kv_cache, val: r.val.at(-1) });
    }
  }
  return out;
}

const STYLES = [
  { color: '#2457a6', dash: '', glyph: '━━' },
  { color: '#c2410c', dash: '8 4', glyph: '– – –' },
  { color: '#15803d', dash: '2 3', glyph: '·····' },
];

/** The loss-by-position curves at the longest context: an SVG with its axes and legend in text. */
function curves(t, results, context) {
  const W = 560, H = 220, L = 44, B = 30, R = 10, T = 10;
  const series = results.map((r, i) => ({ ...STYLES[i], label: r.label, at: r.at.find((a) => a.context === context) }))
    .filter((s) => s.at?.losses);
  const all = series.flatMap((s) => s.at.losses).filter(Number.isFinite);
  if (!all.length) return null;
  const lo = Math.min(...all), hi = Math.max(...all);
  const x = (p) => L + (p / (context - 1)) * (W - L - R);
  const y = (v) => T + (1 - (v - lo) / (hi - lo || 1)) * (H - T - B);
  const ns = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(ns, 'svg');
  svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
  svg.setAttribute('class', 'tr-exp-curves');
  svg.setAttribute('role', 'img');
  svg.setAttribute('aria-label', t('exp.len.curvesAria', { n: context, runs: series.map((s) => s.label).join(', ') }));
  const add = (name, attrs, text) => {
    const e = document.createElementNS(ns, name);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
    if (text != null) e.textContent = text;
    svg.append(e);
    return e;
  };
  add('line', { x1: L, y1: H - B, x2: W - R, y2: H - B, stroke: '#5d636d' });
  add('line', { x1: L, y1: T, x2: L, y2: H - B, stroke: '#5d636d' });
  // the trained context: a dotted line at position 32
  add('line', { x1: x(LENGTHS[0]), y1: T, x2: x(LENGTHS[0]), y2: H - B, stroke: '#9a9a9a', 'stroke-dasharray': '1 3' });
  add('text', { x: x(LENGTHS[0]) + 4, y: T + 10, 'font-size': 11, fill: '#5d636d' }, t('exp.len.trained', { n: LENGTHS[0] }));
  add('text', { x: (L + W) / 2, y: H - 6, 'font-size': 12, 'text-anchor': 'middle', fill: '#333' }, t('exp.len.xAxis'));
  add('text', { x: 4, y: T + 10, 'font-size': 11, fill: '#333' }, hi.toFixed(2));
  add('text', { x: 4, y: H - B, 'font-size': 11, fill: '#333' }, lo.toFixed(2));
  for (const s of series) {
    const pts = s.at.losses.map((v, p) => `${x(p).toFixed(1)},${y(v).toFixed(1)}`).join(' ');
    add('polyline', { points: pts, fill: 'none', stroke: s.color, 'stroke-width': 1.6, 'stroke-dasharray': s.dash });
  }
  return { svg, series };
}

/** The measurements' view: the curves and a table (length), or a table of bytes and losses (kv). */
export function resultView(t, kind, results) {
  const box = el('div', 'tr-exp-results');
  box.dataset.kind = kind;
  const table = el('table', 'tr-table tr-exp-table');
  const head = el('tr');
  const body = el('tbody');
  if (kind === 'length') {
    head.append(el('th', '', t('exp.len.run')), ...LENGTHS.map((n) => el('th', '', t('exp.len.at', { n }))));
    for (const r of results) {
      const row = el('tr');
      row.append(el('th', '', r.label));
      for (const a of r.at) row.append(el('td', a.error ? 'tr-exp-refused' : 'tr-num', a.error ? t('exp.len.refused', { n: a.context }) : a.mean.toFixed(4)));
      body.append(row);
    }
    const c = curves(t, results, LENGTHS.at(-1));
    if (c) {
      const fig = el('figure', 'tr-exp-fig');
      const legend = el('figcaption', 'tr-hint', t('exp.len.legend', { n: LENGTHS.at(-1), runs: c.series.map((s) => `${s.label} ${s.glyph}`).join(', ') }));
      fig.append(c.svg, legend);
      box.append(fig);
    }
    const refused = results.flatMap((r) => r.at.filter((a) => a.error).map((a) => `${r.label}: ${a.error}`));
    for (const why of [...new Set(refused)].slice(0, 1)) box.append(el('p', 'tr-exp-why', why));
  } else {
    head.append(el('th', '', t('exp.kv.heads')), el('th', '', t('exp.kv.bytes')), el('th', '', t('exp.kv.loss')));
    for (const r of results) {
      const row = el('tr');
      row.append(el('th', '', r.label), el('td', 'tr-num', r.bytes.toLocaleString('en-US')), el('td', 'tr-num', Number.isFinite(r.val) ? r.val.toFixed(4) : '—'));
      body.append(row);
    }
  }
  const thead = el('thead');
  thead.append(head);
  table.append(thead, body);
  box.prepend(table);
  box.append(el('p', 'tr-sentence', t(kind === 'length' ? 'exp.len.about' : 'exp.kv.about')));
  return box;
}

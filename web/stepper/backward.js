// backward.js — the backward mode's definitions (its steps, the cached forward values each gradient
// reads) and the "check this gradient" box (api.gradcheck: central differences against the
// analytic gradients). All numbers come from the core; this file only lays them out.
import { el } from '../common/ui.js';
import { formatNumber } from '../common/format.js';

/**
 * The backward steps in order. panels: the gradient panels of the step; from: the gradient panels
 * it is computed from; needs: 'x' (only in x mode), 'rope' (only with RoPE: the rotated q and k),
 * 'flash' (FlashAttention's tiles: D and the recomputed P) or 'mla' (latent attention: ∂L/∂c).
 * In x mode the inputs' step shows W_k, W_v's gradients, or latent attention's weights' (MLA_GRADS).
 */
export const BSTEPS = [
  { id: 'b_out', panels: ['d_out'], from: [] },
  { id: 'b_proj', panels: ['d_W_o', 'd_b_o', 'd_concat'], from: ['d_out'] },
  { id: 'b_context', panels: ['d_context'], from: ['d_concat'] },
  { id: 'b_flash', panels: ['flash_D', 'flash_P'], from: ['d_context'], needs: 'flash' },
  { id: 'b_av', panels: ['d_weights', 'd_v'], from: ['d_context'] },
  { id: 'b_softmax', panels: ['d_scaled'], from: ['d_weights'] },
  { id: 'b_scale', panels: ['d_scores'], from: ['d_scaled'] },
  { id: 'b_rope', panels: ['d_q_rot', 'd_k_rot'], from: ['d_scores'], needs: 'rope' },
  { id: 'b_qk', panels: ['d_q', 'd_k'], from: ['d_scores', 'd_q_rot', 'd_k_rot'] },
  { id: 'b_QKV', panels: ['d_Q', 'd_K', 'd_V'], from: ['d_q', 'd_k', 'd_v'] },
  { id: 'b_latent', panels: ['d_latent'], from: ['d_K', 'd_V'], needs: 'mla' },
  { id: 'b_inputs', panels: ['d_x', 'd_W_q', 'd_W_k', 'd_W_v', 'd_b_q', 'd_b_k', 'd_b_v', 'd_W_dkv', 'd_W_uk', 'd_W_uv', 'd_W_kr', 'd_W_qr'],
    from: ['d_Q', 'd_K', 'd_V', 'd_latent'], needs: 'x' },
];
/** Latent attention's weights' gradients, shown in place of W_k's and W_v's (d_W_kr, d_W_qr with RoPE). */
export const MLA_GRADS = ['d_W_dkv', 'd_W_uk', 'd_W_uv', 'd_W_kr', 'd_W_qr'];

/** The per-head gradient panels (their title names the head when n_head > 1). */
export const HEAD_GRAD_PANELS = ['d_context', 'flash_D', 'flash_P', 'd_weights', 'd_v', 'd_scaled', 'd_scores', 'd_q_rot', 'd_k_rot', 'd_q', 'd_k'];

/** The gradient panels of an input (a cell there can be checked numerically) → the input's name. */
export const INPUT_GRADS = { d_x: 'x', d_W_q: 'W_q', d_W_k: 'W_k', d_W_v: 'W_v', d_W_o: 'W_o', d_Q: 'Q', d_K: 'K', d_V: 'V',
  d_b_q: 'b_q', d_b_k: 'b_k', d_b_v: 'b_v', d_b_o: 'b_o', d_W_dkv: 'W_dkv', d_W_uk: 'W_uk', d_W_uv: 'W_uv', d_W_kr: 'W_kr', d_W_qr: 'W_qr' };

/**
 * The steps shown for a state: without W_o there is no ∂L/∂W_o; in qkv mode Q, K, V are the
 * inputs; a bias's gradient only when that bias is used (biases: the names in use, e.g. ['b_q']);
 * on: the variants whose steps show, { rope, flash, mla } (booleans; latent attention in x mode
 * only, its weights' gradients in place of W_k's and W_v's, W_kr's and W_qr's with RoPE).
 */
export function visibleBSteps(mode, useWo, biases = [], on = {}) {
  const mla = on.mla && mode === 'x';
  const keep = (p) => (MLA_GRADS.includes(p) ? mla && (on.rope || (p !== 'd_W_kr' && p !== 'd_W_qr')) : !(mla && (p === 'd_W_k' || p === 'd_W_v')));
  return BSTEPS.filter((s) => !(s.needs === 'x' && mode !== 'x') && !(s.needs && s.needs !== 'x' && !(s.needs === 'mla' ? mla : on[s.needs])))
    .map((s) => (s.id === 'b_proj' && !useWo ? { ...s, panels: ['d_concat'] } : s))
    .map((s) => ({ ...s, panels: s.panels.filter((p) => (!p.startsWith('d_b_') || biases.includes(p.slice(2))) && keep(p)) }));
}

/**
 * The cached forward values a gradient panel reads: forward panel ids (q, k, v, weights, concat,
 * out) or input grids (x, W_q, W_k, W_v, W_o, target).
 */
export function panelReads(panel, { upstream, useWo, rope = false }) {
  switch (panel) {
    case 'd_out': return upstream === 'mse' ? ['out', 'target'] : [];
    case 'd_W_o': return ['concat'];
    case 'd_concat': return useWo ? ['W_o'] : [];
    case 'd_weights': return ['v'];
    case 'd_v': case 'd_scaled': return ['weights'];
    case 'd_q': return rope ? ['rope_angles'] : ['k'];
    case 'd_k': return rope ? ['rope_angles'] : ['q'];
    case 'd_q_rot': return ['k_rot'];
    case 'd_k_rot': return ['q_rot'];
    case 'd_W_q': case 'd_W_k': case 'd_W_v': case 'd_W_dkv': case 'd_W_kr': case 'd_W_qr': return ['x'];
    case 'd_W_uk': case 'd_W_uv': return ['latent'];
    case 'd_latent': return ['W_uk', 'W_uv'];
    case 'flash_D': return ['flash_context'];
    case 'flash_P': return ['masked', 'flash_m', 'flash_l'];
    case 'd_x': return ['W_q', 'W_k', 'W_v'];
    default: return [];
  }
}

/** The forward panels a backward step reads (shown beside it in step-by-step mode). */
export function stepReads(step, ctx) {
  return [...new Set(step.panels.flatMap((p) => panelReads(p, ctx)))];
}

/** pass: a relative error up to 1e-2, or an absolute one up to 1e-4 (both ≈ 0: rounding noise). */
export const passes = (c) => c.rel_error <= 1e-2 || c.abs_error <= 1e-4;

const sci = (v) => (v === 0 ? '0' : Number.isFinite(v) ? v.toExponential(1).replace('-', '−').replace('e+', 'e') : formatNumber(v));

/**
 * The "check this gradient" box. opts: { t, idPrefix, names: input names, pick: {name,row,col},
 * dims(name) → [rows, cols] | null, run(entries, eps) → {loss, eps, checks} (throws AttentionError),
 * result: an earlier result to show, onResult(result) }.
 * Returns { el, setPick(name, row, col) }.
 */
export function gradCheckBox(opts) {
  const { t, idPrefix: id } = opts;
  const box = el('section', 'aps-gradcheck');
  box.dataset.key = 'gradcheck';
  const h = el('h3', 'aps-gc-title', t('gc.title'));
  h.id = `${id}gc-title`;
  box.setAttribute('aria-labelledby', h.id);
  box.append(h, el('p', 'aps-hint', t('gc.hint')));

  const row = el('div', 'aps-gc-row');
  const labelled = (text, control, key) => {
    const w = el('div', 'aps-field');
    const l = el('label', 'aps-label', text);
    control.id = `${id}gc-${key}`;
    control.dataset.key = `gc.${key}`;
    l.htmlFor = control.id;
    w.append(l, control);
    row.append(w);
    return control;
  };
  const sel = labelled(t('gc.matrix'), el('select', 'aps-select'), 'name');
  for (const n of opts.names) sel.append(new Option(n, n));
  const num = (key, value, min, step) => {
    const i = el('input', 'aps-num');
    i.type = 'number';
    i.min = min;
    i.step = step;
    i.value = value;
    return labelled(t(`gc.${key}`), i, key);
  };
  const pick = opts.pick && opts.names.includes(opts.pick.name) ? opts.pick : { name: opts.names[0], row: 0, col: 0 };
  sel.value = pick.name;
  const rIn = num('row', pick.row + 1, 1, 1);
  const cIn = num('col', pick.col + 1, 1, 1);
  const eIn = num('eps', opts.eps ?? 0.01, 0, 'any');
  box.append(row);

  const btns = el('div', 'aps-gc-row');
  const one = el('button', 'aps-btn', t('gc.one'));
  one.type = 'button';
  one.dataset.key = 'gc.one';
  const all = el('button', 'aps-btn aps-btn-primary', '');
  all.type = 'button';
  all.dataset.key = 'gc.all';
  btns.append(one, all);
  box.append(btns);
  const err = el('p', 'aps-field-error');
  err.setAttribute('aria-live', 'polite');
  box.append(err);
  const out = el('div', 'aps-gc-out');
  out.setAttribute('aria-live', 'polite');
  box.append(out);

  const syncAll = () => { all.textContent = t('gc.all', { name: sel.value }); };
  syncAll();
  sel.addEventListener('change', syncAll);

  const readEps = () => {
    const v = Number(eIn.value);
    if (!(eIn.value.trim() !== '' && Number.isFinite(v) && v > 0 && v <= 1)) {
      err.textContent = t('gc.badEps');
      eIn.setAttribute('aria-invalid', 'true');
      return null;
    }
    eIn.removeAttribute('aria-invalid');
    return v;
  };

  function run(entries) {
    err.textContent = '';
    const eps = readEps();
    if (eps == null) return;
    let res;
    try {
      res = opts.run(entries, eps);
    } catch (e) {
      err.textContent = t('gc.failed', { msg: e?.message ?? String(e) });
      return;
    }
    show(res);
    opts.onResult?.(res);
  }

  one.addEventListener('click', () => {
    const d = opts.dims(sel.value);
    const r = Number(rIn.value);
    const c = Number(cIn.value);
    if (!d || !Number.isInteger(r) || !Number.isInteger(c) || r < 1 || c < 1 || r > d[0] || c > d[1]) {
      err.textContent = t('gc.badEntry', { name: sel.value, rows: d?.[0] ?? 0, cols: d?.[1] ?? 0 });
      return;
    }
    run([{ name: sel.value, row: r - 1, col: c - 1 }]);
  });
  all.addEventListener('click', () => {
    const d = opts.dims(sel.value);
    if (!d) return;
    const entries = [];
    for (let r = 0; r < d[0]; r++) for (let c = 0; c < d[1]; c++) entries.push({ name: sel.value, row: r, col: c });
    run(entries.slice(0, 1024));
  });

  function show(res) {
    if (!res) { out.replaceChildren(); return; }
    const tbl = el('table', 'aps-gc-table');
    tbl.dataset.key = 'gc.table';
    const cap = el('caption', '', t('gc.caption', { n: res.checks.length, loss: formatNumber(res.loss), eps: res.eps }));
    tbl.append(cap);
    const hr = tbl.createTHead().insertRow();
    for (const k of ['entry', 'analytic', 'numeric', 'abs', 'rel', 'result']) {
      const th = el('th', '', t(`gc.col.${k}`));
      th.scope = 'col';
      hr.append(th);
    }
    const body = tbl.createTBody();
    let fails = 0;
    for (const c of res.checks) {
      const ok = passes(c);
      if (!ok) fails++;
      const tr = body.insertRow();
      tr.className = ok ? 'is-pass' : 'is-fail';
      const th = el('th', 'aps-gc-entry', `${c.name}[${c.row + 1},${c.col + 1}]`);
      th.scope = 'row';
      tr.append(th,
        el('td', 'aps-gc-num', formatNumber(c.analytic)),
        el('td', 'aps-gc-num', formatNumber(c.numeric)),
        el('td', 'aps-gc-num', sci(c.abs_error)),
        el('td', 'aps-gc-num aps-gc-rel', sci(c.rel_error)));
      const res1 = el('td', 'aps-gc-result');
      res1.append(el('span', 'aps-gc-mark', ok ? '✓' : '✗'), ` ${t(ok ? 'gc.pass' : 'gc.fail')}`);
      res1.querySelector('.aps-gc-mark').setAttribute('aria-hidden', 'true');
      tr.append(res1);
      tr.querySelectorAll('.aps-gc-num').forEach((td, k) => { td.title = String([c.analytic, c.numeric, c.abs_error, c.rel_error][k]); });
    }
    const sum = el('p', fails ? 'aps-gc-summary is-fail' : 'aps-gc-summary is-pass',
      fails ? t('gc.someFail', { n: fails, total: res.checks.length }) : t('gc.allPass', { total: res.checks.length }));
    const wrap = el('div', 'aps-gc-scroll');
    wrap.append(tbl);
    out.replaceChildren(sum, wrap, el('p', 'aps-hint', t('gc.rule')));
  }
  show(opts.result);

  return {
    el: box,
    setPick(name, r, c) {
      if (!opts.names.includes(name)) return;
      sel.value = name;
      rIn.value = r + 1;
      cIn.value = c + 1;
      syncAll();
    },
  };
}

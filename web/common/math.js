// math.js — tiny MathML builders for the panels' formulas (MathML Core; no KaTeX, no CSS-in-JS).
const NS = 'http://www.w3.org/1998/Math/MathML';

export function m(tag, ...kids) {
  const e = document.createElementNS(NS, tag);
  for (const k of kids) e.append(typeof k === 'string' ? document.createTextNode(k) : k);
  return e;
}
export const mi = (s) => m('mi', s);
export const mn = (s) => m('mn', s);
export const mo = (s) => m('mo', s);
export const mtext = (s) => m('mtext', s);
export const row = (...k) => m('mrow', ...k);
export const sub = (b, i) => m('msub', b, i);
export const sup = (b, e) => m('msup', b, e);
export const frac = (n, d) => m('mfrac', n, d);
export const sqrt = (x) => m('msqrt', x);
export const under = (b, u) => m('munder', b, u);

/** A <math> element (inline by default) with an accessible text alternative. */
export function math(label, ...kids) {
  const e = m('math', row(...kids));
  e.setAttribute('aria-label', label);
  return e;
}

const ij = () => row(mi('i'), mo(','), mi('j'));
const ik = () => row(mi('i'), mo(','), mi('k'));

/** The formula of each panel, given the trace's mode and options. */
export function formula(panel, ctx) {
  const { mode, base, scale, causal, maskKind, softmax, biases = [] } = ctx;
  const W = (n) => sub(mi('W'), mi(n));
  const xs = () => (base > 0 ? sub(mi('x'), row(mo('['), mi('base'), mo(':'), mo(']'))) : mi('x'));
  // + b_q when the bias is used
  const b = (n) => (biases.includes(`b_${n}`) ? [mo('+'), sub(mi('b'), mi(n))] : []);
  const bl = (n) => (biases.includes(`b_${n}`) ? ` + b_${n}` : '');
  switch (panel) {
    case 'q': return mode === 'x' ? math(`Q = x W_q${bl('q')}`, mi('Q'), mo('='), xs(), W('q'), ...b('q')) : math('Q, as typed', mi('Q'));
    case 'k': return mode === 'x' ? math(`K = x W_k${bl('k')}`, mi('K'), mo('='), mi('x'), W('k'), ...b('k')) : math('K, as typed', mi('K'));
    case 'v': return mode === 'x' ? math(`V = x W_v${bl('v')}`, mi('V'), mo('='), mi('x'), W('v'), ...b('v')) : math('V, as typed', mi('V'));
    case 'scores': return math('S = Q K transposed', mi('S'), mo('='), mi('Q'), sup(mi('K'), mi('T')));
    case 'scaled': return scale
      ? math("S' = S over square root of d_k", mi('S′'), mo('='), frac(mi('S'), sqrt(sub(mi('d'), mi('k')))))
      : math("S' = S (scaling off)", mi('S′'), mo('='), mi('S'));
    case 'masked': {
      const cond = maskKind === 'inclusive' ? '≥' : '>';
      const f = causal
        ? [sub(mi('M'), ij()), mo('='), sub(mi('S′'), ij()), mo('+'), row(mo('{'), m('mtable',
            m('mtr', m('mtd', mo('−∞')), m('mtd', mtext('\u2002if '), mi('j'), mo(cond), mi('i'), mo('+'), mi('base'))),
            m('mtr', m('mtd', mn('0')), m('mtd', mtext('\u2002otherwise')))))]
        : [mi('M'), mo('='), mi('S′'), mo('+'), mn('0')];
      return math(causal ? `M = S' + mask, minus infinity where j ${cond} i + base` : "M = S' (no mask)", ...f);
    }
    case 'weights': {
      const arg = (idx) => (softmax === 'naive' ? sub(mi('M'), idx) : row(sub(mi('M'), idx), mo('−'), sub(mi('m'), mi('i'))));
      return math(softmax === 'naive' ? 'A_ij = e^M_ij over sum_k e^M_ik' : 'A_ij = e^(M_ij - m_i) over sum_k e^(M_ik - m_i), m_i = row max',
        sub(mi('A'), ij()), mo('='),
        frac(sup(mi('e'), arg(ij())), row(under(mo('∑'), mi('k')), sup(mi('e'), arg(ik())))));
    }
    case 'context': return math('O = A V', mi('O'), mo('='), mi('A'), mi('V'));
    case 'concat': return math('C = [O_1 ... O_h]', mi('C'), mo('='), mo('['), sub(mi('O'), mn('1')), mo('⋯'), sub(mi('O'), mi('h')), mo(']'));
    case 'out': return math(`Y = C W_o${bl('o')}`, mi('Y'), mo('='), mi('C'), W('o'), ...b('o'));
    default: return math('');
  }
}

// ───────────── the backward pass: ∂L/∂X of each forward value ─────────────
const dL = (x) => frac(row(mi('∂'), mi('L')), row(mi('∂'), x));
const T_ = (x) => sup(x, mi('T'));

/**
 * The formula of each gradient panel. ctx: { mode, base, scale, upstream: 'sum'|'mse'|'d_out',
 * useWo, nHead }.
 */
export function gradFormula(panel, ctx) {
  const { base, scale, upstream, useWo, nHead } = ctx;
  const W = (n) => sub(mi('W'), mi(n));
  const G = () => mi('G');
  const xs = () => (base > 0 ? sub(mi('x'), row(mo('['), mi('base'), mo(':'), mo(']'))) : mi('x'));
  switch (panel) {
    case 'd_out':
      if (upstream === 'sum') return math('dL/dY = 1, for L = sum of Y', dL(mi('Y')), mo('='), mn('1'), mtext('\u2003'), row(mi('L'), mo('='), mo('∑'), mi('Y')));
      if (upstream === 'mse') return math('dL/dY = 2 (Y - target) / N, for L = mean((Y - target)^2)', dL(mi('Y')), mo('='),
        frac(row(mn('2'), mo('('), mi('Y'), mo('−'), mi('t'), mo(')')), mi('N')), mtext('\u2003'),
        row(mi('L'), mo('='), mtext('mean'), mo('('), sup(row(mo('('), mi('Y'), mo('−'), mi('t'), mo(')')), mn('2')), mo(')')));
      return math('dL/dY = dOut, as typed', dL(mi('Y')), mo('='), mi('dOut'));
    case 'd_W_o': return math('dL/dW_o = C transposed times dL/dY', dL(W('o')), mo('='), T_(mi('C')), mo('·'), dL(mi('Y')));
    case 'd_concat': return useWo
      ? math('dL/dC = dL/dY times W_o transposed', dL(mi('C')), mo('='), dL(mi('Y')), mo('·'), T_(W('o')))
      : math('dL/dC = dL/dY (no W_o)', dL(mi('C')), mo('='), dL(mi('Y')));
    case 'd_context': return nHead > 1
      ? math("dL/dO = head h's columns of dL/dC", dL(sub(mi('O'), mi('h'))), mo('='), dL(mi('C')), row(mo('['), mo(':'), mo(','), mtext(' head '), mi('h'), mo(']')))
      : math('dL/dO = dL/dC', dL(mi('O')), mo('='), dL(mi('C')));
    case 'd_weights': return math('dL/dA = dL/dO times V transposed', dL(mi('A')), mo('='), dL(mi('O')), mo('·'), T_(mi('V')));
    case 'd_v': return math('dL/dV = A transposed times dL/dO', dL(mi('V')), mo('='), T_(mi('A')), mo('·'), dL(mi('O')));
    case 'd_scaled': return math("dS'_ij = A_ij (G_ij - sum_k G_ik A_ik), G = dL/dA",
      sub(mi('dS′'), ij()), mo('='), sub(mi('A'), ij()), row(mo('('), sub(G(), ij()), mo('−'), under(mo('∑'), mi('k')), sub(G(), ik()), sub(mi('A'), ik()), mo(')')),
      mtext('\u2003'), row(G(), mo('='), dL(mi('A'))));
    case 'd_scores': return scale
      ? math("dL/dS = dL/dS' times 1 over square root of d_k", dL(mi('S')), mo('='), dL(mi('S′')), mo('·'), frac(mn('1'), sqrt(sub(mi('d'), mi('k')))))
      : math("dL/dS = dL/dS' (scaling off)", dL(mi('S')), mo('='), dL(mi('S′')));
    case 'd_q': return math('dL/dQ = dL/dS times K', dL(mi('Q')), mo('='), dL(mi('S')), mo('·'), mi('K'));
    case 'd_k': return math('dL/dK = dL/dS transposed times Q', dL(mi('K')), mo('='), T_(row(mo('('), dL(mi('S')), mo(')'))), mo('·'), mi('Q'));
    case 'd_Q': case 'd_K': case 'd_V': {
      const n = panel.slice(2);
      const lo = n === 'V' ? 'v' : n.toLowerCase();
      return nHead > 1
        ? math(`dL/d${n} = the heads' dL/d${lo} side by side`, dL(mi(n)), mo('='), mo('['), dL(sub(mi(lo), mn('1'))), mo('⋯'), dL(sub(mi(lo), mi('h'))), mo(']'))
        : math(`dL/d${n} = dL/d${lo} (one head)`, dL(mi(n)), mo('='), dL(mi(lo)));
    }
    case 'd_b_q': case 'd_b_k': case 'd_b_v': case 'd_b_o': {
      const b = panel.slice(4);
      const of = { q: 'Q', k: 'K', v: 'V', o: 'Y' }[b];
      return math(`dL/db_${b} = the column sums of dL/d${of}`, dL(sub(mi('b'), mi(b))), mo('='), under(mo('∑'), mi('t')),
        frac(row(mi('∂'), mi('L')), row(mi('∂'), sub(mi(of), row(mi('t'), mo(','), mo(':'))))));
    }
    case 'd_W_q': return math('dL/dW_q = x[base:] transposed times dL/dQ', dL(W('q')), mo('='), T_(xs()), mo('·'), dL(mi('Q')));
    case 'd_W_k': return math('dL/dW_k = x transposed times dL/dK', dL(W('k')), mo('='), T_(mi('x')), mo('·'), dL(mi('K')));
    case 'd_W_v': return math('dL/dW_v = x transposed times dL/dV', dL(W('v')), mo('='), T_(mi('x')), mo('·'), dL(mi('V')));
    case 'd_x': {
      const qpart = [mo('+'), dL(mi('Q')), mo('·'), T_(W('q'))];
      return math(base > 0
        ? 'dL/dx = dL/dK W_k^T + dL/dV W_v^T, plus dL/dQ W_q^T in rows base and after'
        : 'dL/dx = dL/dQ W_q^T + dL/dK W_k^T + dL/dV W_v^T',
      dL(mi('x')), mo('='), dL(mi('K')), mo('·'), T_(W('k')), mo('+'), dL(mi('V')), mo('·'), T_(W('v')),
      ...(base > 0 ? [mo('+'), row(mo('['), mtext('rows ≥ base'), mo(']'), ...qpart.slice(1))] : qpart));
    }
    default: return math('');
  }
}

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
export const subsup = (b, i, e) => m('msubsup', b, i, e);
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
  const { mode, base, scale, causal, maskKind, softmax } = ctx;
  const W = (n) => sub(mi('W'), mi(n));
  const xs = () => (base > 0 ? sub(mi('x'), row(mo('['), mi('base'), mo(':'), mo(']'))) : mi('x'));
  switch (panel) {
    case 'q': return mode === 'x' ? math('Q = x W_q', mi('Q'), mo('='), xs(), W('q')) : math('Q, as typed', mi('Q'));
    case 'k': return mode === 'x' ? math('K = x W_k', mi('K'), mo('='), mi('x'), W('k')) : math('K, as typed', mi('K'));
    case 'v': return mode === 'x' ? math('V = x W_v', mi('V'), mo('='), mi('x'), W('v')) : math('V, as typed', mi('V'));
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
    case 'out': return math('Y = C W_o', mi('Y'), mo('='), mi('C'), W('o'));
    default: return math('');
  }
}

// explain-math.js — the explanation box's lines as MathML, in the notation of the panels' formulas
// (math.js): A[1,2] → A₁,₂, W_q → W_q (subscript), Σ_k → ∑ with k under it, e^(x − m) → a
// superscript, √d_k → a radical, ∂L/∂A → a fraction, and "a / b" between spaces → a fraction
// bar. The explanations (explain.js, explain-grad.js) write their lines as plain text in this small
// notation; this file reads it. Prose inside a line is written ⟨like this⟩ and becomes <mtext>.
//
//   mathLine('A[1,2] = e^(M[1,2] − max) / Σ_k e^(M[1,k] − max)')  → <math aria-label="…">…</math>
//   plainText('O⟨ of head 2⟩[1,1]')                                → 'O of head 2[1,1]'
//
// Limits: the notation is exactly what the explanations write; anything it does not read is shown
// as text (mathLine never throws: a line it cannot parse becomes <mtext> of the whole line).
import { m, mi, mn, mo, mtext, row, sub, sup, frac, sqrt, under } from './math.js';

/** The line as plain text (⟨⟩ markers removed): for aria-label, copy and tests. */
export function plainText(s) {
  return String(s).replace(/[⟨⟩]/g, '');
}

const OPS = new Set(['=', '+', '·', '×', '>', '<', '≥', '≤', ',', ':', '…', '⋯']);

/** Tokens: num, id (with its _subscript), idx ([…] content), op, open/close, sqrt, sum, pow, d, text, sp. */
function tokenize(s) {
  const out = [];
  let i = 0;
  const prevOperand = () => {
    const p = out[out.length - 1];
    return p && (p.t === 'num' || p.t === 'id' || p.t === 'close' || p.t === 'idx' || p.t === 'text');
  };
  while (i < s.length) {
    const c = s[i];
    const rest = s.slice(i);
    let mt;
    if (c === ' ') {
      let j = i;
      while (s[j] === ' ') j++;
      if (j - i >= 2) out.push({ t: 'sp' });
      out.push({ t: 'gap' }); // a space: separates a loose division from a tight one
      i = j;
      continue;
    }
    if (c === '⟨') {
      const j = s.indexOf('⟩', i);
      if (j < 0) throw new Error('unclosed ⟨');
      out.push({ t: 'text', v: s.slice(i + 1, j) });
      i = j + 1;
      continue;
    }
    if (c === '[') {
      // an index: matching ], its content read as a small expression
      let depth = 0;
      let j = i;
      for (; j < s.length; j++) {
        if (s[j] === '[') depth++;
        else if (s[j] === ']' && --depth === 0) break;
      }
      if (j >= s.length) throw new Error('unclosed [');
      out.push({ t: 'idx', v: s.slice(i + 1, j) });
      i = j + 1;
      continue;
    }
    if ((mt = /^(?:NaN|∞|\d+(?:\.\d+)?(?:e[+−-]?\d+)?)/.exec(rest))) {
      out.push({ t: 'num', v: mt[0] });
      i += mt[0].length;
      continue;
    }
    if ((c === '−' || c === '-') && !prevOperand()) {
      const n = /^[−-](?:NaN|∞|\d+(?:\.\d+)?(?:e[+−-]?\d+)?)/.exec(rest);
      if (n) { out.push({ t: 'num', v: n[0].replace('-', '−') }); i += n[0].length; continue; }
      out.push({ t: 'op', v: '−' });
      i++;
      continue;
    }
    if (c === '−' || c === '-') { out.push({ t: 'op', v: '−' }); i++; continue; }
    if ((mt = /^Σ_([A-Za-z])/.exec(rest))) { out.push({ t: 'sum', v: mt[1] }); i += mt[0].length; continue; }
    if (c === 'Σ') { out.push({ t: 'sum', v: '' }); i++; continue; }
    if (c === '√') { out.push({ t: 'sqrt' }); i++; continue; }
    if (c === '∂') { out.push({ t: 'd' }); i++; continue; }
    if (rest.startsWith('e^')) { out.push({ t: 'pow' }); i += 2; continue; }
    if ((mt = /^[A-Za-zθφ]+′?(?:_[A-Za-z0-9]+)?/.exec(rest))) { // (θ, φ: RoPE's angles)
      const [name, subName] = mt[0].split('_');
      out.push({ t: 'id', v: name, sub: subName });
      i += mt[0].length;
      // q1, k2: an identifier followed at once by digits takes them as its subscript
      const d = /^\d+/.exec(s.slice(i));
      if (d && !subName && !/^\d+\.\d/.test(s.slice(i))) { out[out.length - 1].sub = d[0]; i += d[0].length; }
      continue;
    }
    if (c === '(') { out.push({ t: 'open' }); i++; continue; }
    if (c === ')') { out.push({ t: 'close' }); i++; continue; }
    if (c === '/') { out.push({ t: 'div' }); i++; continue; }
    if (OPS.has(c)) { out.push({ t: 'op', v: c }); i++; continue; }
    out.push({ t: 'op', v: c }); // anything else is shown as it is
    i++;
  }
  return out;
}

const ident = (tok) => {
  const base = mi(tok.v);
  return tok.sub ? sub(base, /^\d+$/.test(tok.sub) ? mn(tok.sub) : mi(tok.sub)) : base;
};

/** Reads an index's content ("1,2", "i,:", "2+t,1") as a small row. */
function indexRow(text) {
  const p = new Parser(tokenize(text).filter((x) => x.t !== 'gap' && x.t !== 'sp'));
  return row(...p.sequence(() => false));
}

class Parser {
  constructor(toks) { this.toks = toks; this.i = 0; }
  peek(k = 0) { return this.toks[this.i + k]; }
  next() { return this.toks[this.i++]; }
  skipGaps() { while (this.peek()?.t === 'gap') this.i++; }

  /** One atom: a number, an identifier with its index, (…), √x, ∂x, e^x, Σ, text; and, unless
   * noDiv (the operand of a prefix: ∂L in ∂L/∂A), a tight division after it. */
  atom(noDiv = false) {
    const tok = this.next();
    if (!tok) throw new Error('missing operand');
    let node;
    switch (tok.t) {
      case 'num': node = mn(tok.v); break;
      case 'text': node = mtext(tok.v); break;
      case 'id': {
        node = ident(tok);
        if (this.peek()?.t === 'idx') {
          const ix = indexRow(this.next().v);
          // A[1,2] → A with subscript 1,2; W_q[:,1] (already subscripted) → W_q[:,1] inline
          node = tok.sub ? row(node, mo('['), ix, mo(']')) : sub(node, ix);
        }
        break;
      }
      case 'idx': node = row(mo('['), indexRow(tok.v), mo(']')); break;
      case 'open': {
        const inner = this.sequence((t) => t.t === 'close');
        if (this.next()?.t !== 'close') throw new Error('unclosed (');
        node = row(mo('('), ...inner, mo(')'));
        node.inner = inner;
        break;
      }
      case 'sqrt': node = sqrt(this.atom(true)); break;
      case 'd': node = row(mi('∂'), this.atom(true)); break;
      case 'pow': {
        const e = this.atom(true);
        node = sup(mi('e'), e.inner ? row(...e.inner) : e);
        break;
      }
      case 'sum': node = tok.v ? under(mo('∑'), mi(tok.v)) : mo('∑'); break;
      case 'op': node = mo(tok.v); break;
      case 'div': node = mo('/'); break;
      default: throw new Error(`unexpected ${tok.t}`);
    }
    // a tight division (no spaces around /): 1/√d_k, ∂L/∂A[1,2], ∂(Σ Y)/∂Y[1,1]
    if (!noDiv && this.peek()?.t === 'div' && this.peek(1) && this.peek(1).t !== 'gap') {
      this.next();
      const den = this.atom();
      node = frac(node.inner ? row(...node.inner) : node, den.inner ? row(...den.inner) : den);
    }
    return node;
  }

  /** Nodes up to a token that stop() accepts (not consumed); loose " / " makes a fraction of the run. */
  sequence(stop) {
    const nodes = [];
    let runStart = 0; // the run since the last '=' (or similar): what a loose division divides
    while (this.peek() && !stop(this.peek())) {
      const tok = this.peek();
      if (tok.t === 'gap') { this.i++; continue; }
      if (tok.t === 'sp') { this.i++; nodes.push(m('mspace', )); nodes[nodes.length - 1].setAttribute('width', '1em'); continue; }
      if (tok.t === 'op' && ['=', '>', '<', '≥', '≤', ','].includes(tok.v)) {
        this.i++;
        nodes.push(mo(tok.v));
        runStart = nodes.length;
        continue;
      }
      if (tok.t === 'div') {
        // a loose division: everything since the last '=' over the next run
        this.i++;
        const num = nodes.splice(runStart);
        const den = [];
        while (this.peek() && !stop(this.peek())) {
          const t = this.peek();
          if (t.t === 'gap') { this.i++; continue; }
          if ((t.t === 'op' && ['=', '>', '<', '≥', '≤', ','].includes(t.v)) || t.t === 'sp' || t.t === 'div') break;
          if (t.t === 'op') { den.push(mo(this.next().v)); continue; }
          den.push(this.atom());
        }
        const strip = (xs) => (xs.length === 1 && xs[0].inner ? xs[0].inner : xs);
        nodes.push(frac(row(...strip(num)), row(...strip(den))));
        continue;
      }
      if (tok.t === 'op') { this.i++; nodes.push(mo(tok.v)); continue; }
      nodes.push(this.atom());
    }
    return nodes;
  }
}

/** A line of the explanation as an inline <math> (with the plain text as its label). */
export function mathLine(text) {
  const label = plainText(text);
  let kids;
  let fallback = false;
  try {
    const p = new Parser(tokenize(String(text)));
    kids = p.sequence(() => false);
    if (p.i < p.toks.length) throw new Error('left over');
  } catch {
    kids = [mtext(label)];
    fallback = true;
  }
  const e = m('math', row(...kids));
  e.setAttribute('aria-label', label);
  if (fallback) e.dataset.fallback = 'text'; // not read as notation (tests look for this)
  return e;
}

/** One line of a cell's arithmetic (lineBuilder's {text, kind}) as a <div class="aps-ex-KIND">: MathML, or prose for a note. */
export function exLine(line) {
  const text = plainText(line.text);
  const d = document.createElement('div');
  d.className = `aps-ex-${line.kind}`;
  d.dataset.text = text; // the line as text (what the <math> says in its aria-label)
  if (line.kind === 'note') d.textContent = text;
  else d.append(mathLine(line.text));
  return d;
}

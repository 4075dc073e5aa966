// next-bars.js — the bars of a next-token distribution (the core's answer: gpt.js nextToken, or a
// generation step's `distribution`), as a table: the token (a space as ␣, a newline as ↵), a bar
// for the probability it is drawn with over a hatched one for its probability before top-k and
// top-p, the probability and the logit; dropped tokens grey. Used by the next-token section and
// by the generation's "drawn from" view. Lays out numbers only: it computes none.
import { el } from '../common/ui.js';
import { tokenMark as tokenLabel } from '../common/export.js';

/** A probability as the bars show it. */
export const pct = (p) => (p >= 0.9995 ? '100%' : p >= 0.001 ? `${(p * 100).toFixed(1)}%` : p > 0 ? '<0.1%' : '0%');

/** An empty table of bars with its accessible name and column heads. */
export function barsTable(t, label) {
  const tb = el('table', 'tr-table tr-next-bars');
  tb.setAttribute('aria-label', label);
  const head = el('thead');
  const hr = el('tr');
  for (const [key, cls] of [['next.col.token', ''], ['next.col.p', 'tr-next-pcol'], ['next.col.logit', 'tr-num']]) {
    const th = el('th', cls, t(key));
    th.scope = 'col';
    hr.append(th);
  }
  head.append(hr);
  tb.append(head, el('tbody'));
  return tb;
}

/** Writes the answer's tokens into the table's body; `drawn` (a token id) is marked. */
export function fillBars(table, t, a, drawn = -1) {
  const rows = a.top.map((e) => {
    const tr = el('tr', `${e.kept ? '' : 'is-dropped'}${e.id === drawn ? ' is-drawn' : ''}`);
    tr.dataset.id = String(e.id);
    const th = el('th', 'tr-next-tok tr-mono', tokenLabel(e.text));
    th.scope = 'row';
    if (e.text === ' ') th.title = t('next.space');
    else if (e.text === '\n') th.title = t('next.newline');
    const td = el('td');
    const cell = el('div', 'tr-next-pcell');
    const bar = el('div', 'tr-next-bar');
    const ghost = el('span', 'tr-next-ghost');
    const fill = el('span', 'tr-next-fill');
    ghost.style.width = `${(e.p_full * 100).toFixed(2)}%`; // CSSOM, allowed by style-src 'self'
    fill.style.width = `${(e.p * 100).toFixed(2)}%`;
    bar.append(ghost, fill);
    td.title = e.kept ? t('next.keptTitle', { p: e.p.toPrecision(4), full: e.p_full.toPrecision(4) }) : t('next.droppedTitle', { full: e.p_full.toPrecision(4) });
    cell.append(bar, el('span', 'tr-num tr-next-p', pct(e.p)));
    td.append(cell);
    tr.append(th, td, el('td', 'tr-num', e.logit.toFixed(3)));
    return tr;
  });
  table.tBodies[0].replaceChildren(...rows);
}

/** The facts line of an answer: entropy, what was kept, the dropped probability, the temperature. */
export function factsText(t, a) {
  const cut = a.greedy ? t('next.cut.greedy') : a.top_k > 0 && a.top_p < 1 ? `${t('next.cut.k', { k: a.top_k })}, ${t('next.cut.p', { p: a.top_p })}`
    : a.top_k > 0 ? t('next.cut.k', { k: a.top_k }) : a.top_p < 1 ? t('next.cut.p', { p: a.top_p }) : '';
  return t(cut ? 'next.facts' : 'next.factsAll', {
    entropy: a.entropy.toFixed(3), full: a.entropy_full.toFixed(3), cut, kept: a.kept, V: a.vocab_size ?? '',
    dropped: pct(a.dropped_mass), T: a.temperature,
  });
}

// print.js — printing the stepper (Ctrl+P, "Save as PDF"): every panel with its numbers. On screen
// only the panels near it are painted (panels.js: IntersectionObservers, the rest in idle time),
// and the step-by-step view shows one step; so before the browser lays out the printed pages
// (beforeprint, or the print media query turning on: page.pdf() and some browsers fire only one),
// every step's panels are shown and each is painted and its table written now; after printing,
// the step view comes back as it was. stepper.css's @media print does the rest (no toolbar, no
// sticky boxes, no content-visibility, panels kept whole on a page).
// Some matrices would not print their numbers as the screen lays them out, so for the print only
// they get a plain copy (stepper.css .aps-print-blocks, shown only in print, the screen's matrix
// hidden): a panel or input grid wider than the paper (the d_k = 64 example, 16 columns of
// signed numbers) and the heatmap-only panels of large inputs (past 32 tokens). The copy is split
// into blocks of columns that each fit the paper's width, every block with its column numbers and
// row labels, in a smaller font, coloured like the panel; the blocks stack one under the other and
// the page may break between blocks. After printing the copies are removed.
// The same painting of every panel serves a full-page screenshot (paintAll, the controller's
// paintAll()): a capture of the whole page does not scroll, so the far panels would be blank.
// Limits: the paper's width is an estimate in characters of the print font (PAPER_CHARS: A4 or
// Letter, portrait, default margins); on narrower paper a block can still be cut. An exercise's
// asked cells print "?" in the copy (never the answer).
import { look } from './panels.js';
import { flushPending } from './text-queue.js';
import { layoutSteps } from './pipeline.js';
import { el } from '../common/ui.js';
import { formatNumber } from '../common/format.js';

/** Characters of the print font (stepper.css .aps-print-mat, 8pt monospace) across the paper. */
const PAPER_CHARS = 100;
/** Characters a cell takes besides its text (its padding and the spacing between cells). */
const CELL_CHARS = 2;

/**
 * A matrix as tables of column blocks that each fit the paper, or null when it fits whole and
 * !always. g: { R, C, text(i, j), cls(i, j), rowLabel(i), colLabel(j), rowClass(i) }.
 */
function blockTables(g, always) {
  const { R, C } = g;
  if (!R || !C) return null;
  const texts = Array.from({ length: R }, (_, i) => Array.from({ length: C }, (_, j) => g.text(i, j)));
  const widths = [];
  for (let j = 0; j < C; j++) {
    let w = g.colLabel(j).length;
    for (let i = 0; i < R; i++) w = Math.max(w, texts[i][j].length);
    widths.push(w + CELL_CHARS);
  }
  let labels = 0;
  for (let i = 0; i < R; i++) labels = Math.max(labels, g.rowLabel(i).length);
  labels += CELL_CHARS;
  if (!always && labels + widths.reduce((a, b) => a + b, 0) <= PAPER_CHARS) return null;
  // columns packed into blocks no wider than the paper (a block has at least one column)
  const blocks = [];
  let cur = null;
  for (let j = 0; j < C; j++) {
    if (!cur || cur.w + widths[j] > PAPER_CHARS) { cur = { from: j, to: j, w: labels }; blocks.push(cur); }
    cur.to = j;
    cur.w += widths[j];
  }
  const box = el('div', 'aps-print-blocks');
  for (const b of blocks) {
    const table = el('table', 'aps-print-mat');
    const head = table.createTHead().insertRow();
    head.append(el('th', 'aps-corner'));
    for (let j = b.from; j <= b.to; j++) { const th = el('th', 'aps-idx', g.colLabel(j)); th.scope = 'col'; head.append(th); }
    const body = table.createTBody();
    for (let i = 0; i < R; i++) {
      const tr = body.insertRow();
      const rc = g.rowClass?.(i);
      if (rc) tr.className = rc;
      const th = el('th', 'aps-idx', g.rowLabel(i));
      th.scope = 'row';
      tr.append(th);
      for (let j = b.from; j <= b.to; j++) tr.append(el('td', g.cls(i, j), texts[i][j]));
    }
    box.append(table);
  }
  return box;
}

/** The print copy of a step's view (MatrixView or HeatmapView): heatmaps always, else if too wide. */
function printBlocks(view) {
  const d = view.data;
  if (!d?.m) return null;
  const { m, opts, lo, hi } = d;
  const asked = (i, j) => view.ask?.has(`${i},${j}`);
  return blockTables({
    R: m.length,
    C: m.length ? m[0].length : 0,
    text: (i, j) => (asked(i, j) ? '?' : formatNumber(m[i][j])),
    cls: (i, j) => {
      if (asked(i, j)) return 'aps-c';
      const xc = opts.cellClass?.(i, j) ?? '';
      return look(m[i][j], lo, hi, opts.diverging).cls + (xc ? ` ${xc}` : '');
    },
    rowLabel: (i) => String(opts.rowLabels?.[i] ?? i + 1),
    colLabel: (j) => String(opts.colLabels?.[j] ?? j + 1),
    rowClass: opts.rowClass,
  }, !!view.heat);
}

/** The print copy of an input grid (MatrixEditor) wider than the paper: its cells as typed. */
function editorBlocks(ed) {
  const cells = ed.cells;
  return blockTables({
    R: cells.length,
    C: Math.max(0, ...cells.map((r) => r.length)),
    text: (i, j) => cells[i][j] ?? '',
    cls: () => 'aps-print-gc',
    rowLabel: (i) => String(i + 1),
    colLabel: (j) => String(j + 1),
  }, false);
}

/**
 * Every shown panel painted and its table written now (not only those near the screen), and the
 * panels rendered while off screen (.aps-painted-all: no content-visibility) until the next edit:
 * for a full-page screenshot or any capture of the whole page (the controller's paintAll()).
 * each(view): called for every view painted (the print copies).
 */
export function paintAll(ctx, each = () => {}) {
  if (ctx.destroyed) return;
  ctx.root.classList.add('aps-painted-all');
  flushPending();
  for (const v of ctx.views.values()) {
    if (v.fig?.hidden) continue;
    for (const sub of [v.view, v.stats, ...(v.multi ?? []).map((m) => m.view)]) {
      if (!sub) continue;
      sub.ensurePainted?.();
      sub.syncText?.();
      each(sub);
    }
  }
}

/** Installs the print hooks on a mounted stepper's context; → a function that removes them. */
export function hookPrint(ctx) {
  let printing = false;
  let wasStep = false;
  let copies = []; // [screen element, its print copy]
  const before = () => {
    if (printing || ctx.destroyed) return;
    printing = true;
    ctx.root.classList.add('aps-printing');
    wasStep = ctx.state.view === 'step';
    if (wasStep) {
      ctx.state.view = 'all'; // for the layout only: the state (and the permalink) are not written
      layoutSteps(ctx);
    }
    const copy = (scroll, blocks) => {
      if (!blocks) return;
      scroll.after(blocks);
      scroll.classList.add('is-print-copied');
      copies.push([scroll, blocks]);
    };
    paintAll(ctx, (sub) => copy(sub.scroll, printBlocks(sub)));
    for (const ed of ctx.editors?.values() ?? []) copy(ed.scroll, editorBlocks(ed));
  };
  const after = () => {
    if (!printing) return;
    printing = false;
    ctx.root.classList.remove('aps-printing', 'aps-painted-all');
    for (const [scroll, copy] of copies) { copy.remove(); scroll.classList.remove('is-print-copied'); }
    copies = [];
    if (wasStep && !ctx.destroyed) {
      ctx.state.view = 'step';
      layoutSteps(ctx);
    }
  };
  const mq = globalThis.matchMedia?.('print');
  const onMq = (e) => (e.matches ? before() : after());
  globalThis.addEventListener('beforeprint', before);
  globalThis.addEventListener('afterprint', after);
  mq?.addEventListener('change', onMq);
  return () => {
    globalThis.removeEventListener('beforeprint', before);
    globalThis.removeEventListener('afterprint', after);
    mq?.removeEventListener('change', onMq);
  };
}

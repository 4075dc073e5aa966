// grid.js — the editable matrix grid of the stepper's input: spreadsheet keyboard navigation,
// add/remove rows and columns, block paste, and a paste box. The grid edits the TEXT of the matrix
// (cells as typed, so bad input survives); the numbers are read by the C++ parser (api.parseMatrix
// or api.trace), never by JS.
import { el } from '../common/ui.js';
import { cellText } from '../common/format.js';

/** Cells (strings) from matrix text: rows on lines or split by ';', cells by tabs, else spaces/commas. */
export function textToCells(text) {
  const lines = String(text ?? '').split(/\r?\n|;/).filter((l) => l.trim() !== '');
  if (!lines.length) return [['']];
  return lines.map((l) => (l.includes('\t') ? l.split('\t').map((c) => c.trim()) : l.trim().split(/[\s,]+/)));
}

/**
 * Whether a cell's text could overflow its cell (max-width 7rem): anything but up to 7 printable
 * ASCII characters, which fit in any font (the cell is clipped with an ellipsis only then).
 */
export const mayOverflow = (text) => !/^[\x20-\x7e]{0,7}$/.test(text ?? '');

/** Matrix text from cells: spaces when every cell is a plain token, tabs when a cell is empty. */
export function cellsToText(cells) {
  const tabs = cells.some((r) => r.some((c) => c === '' || /[\s,;]/.test(c)));
  return cells.map((r) => r.join(tabs ? '\t' : ' ')).join('\n');
}

/**
 * One matrix editor: a header (name, shape, resize buttons), the grid, an error slot, a paste box.
 * opts: { name, hint, text, t, api, idPrefix, maxDim, onChange(text, typing?), onPaste?, vector? (a
 * bias: one row, no row buttons) }; typing: 'r,c' of the cell whose keystrokes made the change
 * (they are one undo entry), absent for a change made at once (a paste, a resize, Delete).
 * rowLabel?(i): a row's label instead of its number (a prompt's token), or null.
 */
export class MatrixEditor {
  constructor(opts) {
    this.o = opts;
    this.cells = textToCells(opts.text);
    this.pos = { r: 0, c: 0 };
    this.editing = null; // { input, original }
    const { t, name } = opts;
    this.el = el('section', 'aps-editor');
    this.el.dataset.matrix = name;
    this.el.setAttribute('aria-label', t('editor.label', { name }));
    const head = el('div', 'aps-editor-head');
    const title = el('h3', 'aps-editor-name', name);
    this.shapeEl = el('span', 'aps-shape');
    head.append(title, this.shapeEl);
    if (opts.hint) head.append(el('span', 'aps-hint', opts.hint));
    const resize = el('div', 'aps-resize');
    resize.setAttribute('role', 'group');
    resize.setAttribute('aria-label', t('editor.size', { name }));
    const btn = (label, aria, fn, key) => {
      const b = el('button', 'aps-mini', label);
      b.type = 'button';
      b.setAttribute('aria-label', aria);
      b.title = aria;
      b.dataset.key = `${name}.${key}`;
      b.addEventListener('click', fn);
      resize.append(b);
      return b;
    };
    this.btnRowMinus = btn(t('editor.rowMinus'), t('editor.removeRow', { name }), () => this.resize(-1, 0), 'row-');
    this.btnRowPlus = btn(t('editor.rowPlus'), t('editor.addRow', { name }), () => this.resize(1, 0), 'row+');
    if (opts.vector) { this.btnRowMinus.hidden = true; this.btnRowPlus.hidden = true; } // a bias: one row
    this.btnColMinus = btn(t('editor.colMinus'), t('editor.removeCol', { name }), () => this.resize(0, -1), 'col-');
    this.btnColPlus = btn(t('editor.colPlus'), t('editor.addCol', { name }), () => this.resize(0, 1), 'col+');
    head.append(resize);

    this.scroll = el('div', 'aps-grid-scroll');
    this.table = el('table', 'aps-grid');
    this.table.setAttribute('role', 'grid');
    this.table.setAttribute('aria-label', t('editor.gridLabel', { name }));
    this.scroll.append(this.table);
    this.errorEl = el('p', 'aps-field-error');
    this.errorEl.id = `${opts.idPrefix}err-${name}`;
    this.errorEl.setAttribute('aria-live', 'polite');
    this.table.setAttribute('aria-describedby', this.errorEl.id);

    // paste box
    const details = el('details', 'aps-paste');
    const summary = el('summary', '', t('paste.summary'));
    const lab = el('label', 'aps-paste-label', t('paste.label', { name }));
    this.pasteArea = el('textarea', 'aps-paste-text');
    this.pasteArea.rows = 3;
    this.pasteArea.spellcheck = false;
    this.pasteArea.dataset.key = `${name}.paste`;
    this.pasteArea.placeholder = '[[1, 0], [0, 1]]  np.array(…)  tensor(…)';
    lab.append(this.pasteArea);
    const use = el('button', 'aps-btn', t('paste.use'));
    use.type = 'button';
    use.dataset.key = `${name}.paste-use`;
    this.pasteError = el('p', 'aps-field-error');
    this.pasteError.setAttribute('aria-live', 'polite');
    use.addEventListener('click', () => this.usePasteBox());
    this.pasteArea.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) { e.preventDefault(); this.usePasteBox(); }
    });
    details.append(summary, lab, use, this.pasteError);
    this.details = details;

    this.el.append(head, this.scroll, this.errorEl, details);
    this.table.addEventListener('keydown', (e) => this.onKey(e));
    this.table.addEventListener('paste', (e) => this.onPaste(e));
    this.table.addEventListener('dblclick', (e) => {
      const td = e.target.closest('td[data-r]');
      if (td) this.startEdit(null);
    });
    this.table.addEventListener('focusin', (e) => {
      const td = e.target.closest('td[data-r]');
      if (td) this.setPos(+td.dataset.r, +td.dataset.c, false);
    });
    this.build();
  }

  get rows() { return this.cells.length; }
  get cols() { return Math.max(...this.cells.map((r) => r.length)); }
  text() { return cellsToText(this.cells); }

  build() {
    const { t, name, maxDim } = this.o;
    const R = this.rows;
    const C = this.cols;
    this.table.replaceChildren();
    this.badEls = [];
    this.fed = [];
    const head = this.table.createTHead().insertRow();
    head.append(el('th', 'aps-corner'));
    for (let j = 0; j < C; j++) {
      const th = el('th', 'aps-idx', String(j + 1));
      th.scope = 'col';
      head.append(th);
    }
    const body = this.table.createTBody();
    this.tds = [];
    for (let i = 0; i < R; i++) {
      const tr = body.insertRow();
      const label = this.o.rowLabel?.(i);
      const th = el('th', 'aps-idx', label ?? String(i + 1));
      if (label) th.title = label;
      th.scope = 'row';
      tr.append(th);
      const tdRow = [];
      for (let j = 0; j < C; j++) {
        const td = el('td', 'aps-gc');
        td.setAttribute('role', 'gridcell');
        td.dataset.r = i;
        td.dataset.c = j;
        td.tabIndex = -1;
        td.setAttribute('aria-label', t('editor.cell', { name, r: i + 1, c: j + 1 }));
        tr.append(td);
        tdRow.push(td);
      }
      this.tds.push(tdRow);
    }
    this.pos.r = Math.min(this.pos.r, R - 1);
    this.pos.c = Math.min(this.pos.c, C - 1);
    this.tds[this.pos.r][this.pos.c].tabIndex = 0;
    this.paint();
    this.shapeEl.textContent = `${R} × ${C}`;
    this.btnRowMinus.disabled = R <= 1;
    this.btnColMinus.disabled = C <= 1;
    this.btnRowPlus.disabled = R >= maxDim;
    this.btnColPlus.disabled = C >= maxDim;
  }

  paint() {
    for (let i = 0; i < this.tds.length; i++) {
      for (let j = 0; j < this.tds[i].length; j++) {
        const td = this.tds[i][j];
        if (this.editing && this.editing.td === td) continue;
        const v = this.cells[i][j];
        td.textContent = v ?? '';
        td.classList.toggle('is-long', mayOverflow(v));
        td.classList.toggle('is-missing', v === undefined);
        td.classList.toggle('is-empty', v === '');
      }
    }
  }

  setText(text) {
    this.cells = textToCells(text);
    this.build();
  }

  changed(rebuild) {
    if (rebuild) this.build(); else this.paint();
    this.shapeEl.textContent = `${this.rows} × ${this.cols}`;
    this.o.onChange(this.text());
  }

  setPos(r, c, focus = true) {
    r = Math.max(0, Math.min(this.rows - 1, r));
    c = Math.max(0, Math.min(this.cols - 1, c));
    const old = this.tds[this.pos.r]?.[this.pos.c];
    if (old) old.tabIndex = -1;
    this.pos = { r, c };
    const td = this.tds[r][c];
    td.tabIndex = 0;
    if (focus) td.focus();
  }

  setCell(r, c, v) {
    const row = this.cells[r];
    while (row.length < c) row.push('');
    row[c] = v;
  }

  startEdit(initial) {
    if (this.editing) return;
    const { r, c } = this.pos;
    const td = this.tds[r][c];
    const original = this.cells[r][c] ?? '';
    const input = el('input', 'aps-cell-input');
    input.type = 'text';
    input.value = initial ?? original;
    input.spellcheck = false;
    input.setAttribute('aria-label', this.o.t('editor.cell', { name: this.o.name, r: r + 1, c: c + 1 }));
    this.editing = { td, input, original, r, c };
    td.textContent = '';
    td.classList.add('is-long'); // the input is wider than the cell's content box: clipped
    td.append(input);
    input.focus();
    if (initial == null) input.select();
    else input.setSelectionRange(input.value.length, input.value.length);
    const typing = `${r},${c}`; // the keystrokes of one cell: one undo entry
    input.addEventListener('input', () => {
      this.setCell(r, c, input.value.trim());
      this.o.onChange(this.text(), typing);
    });
    input.addEventListener('blur', () => this.endEdit(true, false));
    if (initial != null) {
      this.setCell(r, c, input.value.trim());
      this.o.onChange(this.text(), typing);
    }
  }

  endEdit(commit, refocus = true) {
    const ed = this.editing;
    if (!ed) return;
    this.editing = null;
    if (!commit) this.setCell(ed.r, ed.c, ed.original);
    else this.setCell(ed.r, ed.c, ed.input.value.trim());
    ed.input.remove();
    this.paint();
    this.o.onChange(this.text(), `${ed.r},${ed.c}`);
    if (refocus) ed.td.focus();
  }

  onKey(e) {
    const { r, c } = this.pos;
    if (this.editing) {
      const k = e.key;
      if (k === 'Enter') { e.preventDefault(); this.endEdit(true); this.setPos(r + (e.shiftKey ? -1 : 1), c); }
      else if (k === 'Tab') { e.preventDefault(); this.endEdit(true); this.moveTab(e.shiftKey); }
      else if (k === 'Escape') { e.preventDefault(); e.stopPropagation(); this.endEdit(false); }
      else if (k === 'ArrowUp' || k === 'ArrowDown') { e.preventDefault(); this.endEdit(true); this.setPos(r + (k === 'ArrowUp' ? -1 : 1), c); }
      e.stopPropagation();
      return;
    }
    if (!e.target.closest('td[data-r]')) return;
    const k = e.key;
    const moves = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
    if (moves[k]) { e.preventDefault(); this.setPos(r + moves[k][0], c + moves[k][1]); }
    else if (k === 'Home') { e.preventDefault(); this.setPos(e.ctrlKey ? 0 : r, 0); }
    else if (k === 'End') { e.preventDefault(); this.setPos(e.ctrlKey ? this.rows - 1 : r, this.cols - 1); }
    else if (k === 'Tab') {
      const last = e.shiftKey ? r === 0 && c === 0 : r === this.rows - 1 && c === this.cols - 1;
      if (!last) { e.preventDefault(); this.moveTab(e.shiftKey); }
    } else if (k === 'Enter' || k === 'F2') { e.preventDefault(); this.startEdit(null); }
    else if (k === 'Delete' || k === 'Backspace') {
      e.preventDefault();
      this.setCell(r, c, '');
      this.changed(false);
    } else if (k.length === 1 && !e.ctrlKey && !e.metaKey && !e.altKey) {
      e.preventDefault();
      this.startEdit(k);
    }
    // a key the grid used stays in it; Tab and Ctrl/⌘ combinations it left alone (Ctrl+Z) go on
    if (e.defaultPrevented || (k !== 'Tab' && !e.ctrlKey && !e.metaKey)) e.stopPropagation();
  }

  moveTab(back) {
    let { r, c } = this.pos;
    if (back) { if (c > 0) c--; else if (r > 0) { r--; c = this.cols - 1; } }
    else if (c < this.cols - 1) c++; else if (r < this.rows - 1) { r++; c = 0; }
    this.setPos(r, c);
  }

  resize(dr, dc) {
    const { maxDim } = this.o;
    if (dr > 0 && this.o.vector) return;
    if (dr > 0 && this.rows < maxDim) this.cells.push(Array(this.cols).fill('0'));
    if (dr < 0 && this.rows > 1) this.cells.pop();
    if (dc > 0 && this.cols < maxDim) { const C = this.cols; for (const row of this.cells) { while (row.length < C) row.push(''); row.push('0'); } }
    if (dc < 0 && this.cols > 1) { const C = this.cols; for (const row of this.cells) if (row.length >= C) row.length = C - 1; }
    this.changed(true);
  }

  /** Fills the grid from numbers (a parsed block) starting at (r, c); grows it up to maxDim. */
  fillBlock(m, r0, c0) {
    const { maxDim, t } = this.o;
    if (r0 + m.length > maxDim || c0 + m[0].length > maxDim) {
      return t('err.pasteTooBig', { rows: m.length, cols: m[0].length, max: maxDim });
    }
    const C = Math.max(this.cols, c0 + m[0].length);
    while (this.cells.length < r0 + m.length) this.cells.push([]);
    for (const row of this.cells) while (row.length < C) row.push('0');
    m.forEach((row, i) => row.forEach((v, j) => { this.cells[r0 + i][c0 + j] = cellText(v); }));
    this.changed(true);
    return '';
  }

  onPaste(e) {
    const text = e.clipboardData?.getData('text/plain') ?? '';
    const block = /[\n\t;[\],]/.test(text.trim()) || text.trim().split(/\s+/).length > 1;
    if (this.editing && !block) return; // an ordinary paste into the cell's input
    e.preventDefault();
    const { r, c } = this.pos;
    if (this.editing) this.endEdit(false, false);
    if (!block) { this.setCell(r, c, text.trim()); this.changed(false); this.tds[r][c].focus(); return; }
    let m;
    try {
      m = this.o.api.parseMatrix(text);
    } catch (err) {
      this.showPasteError(this.o.t('err.paste', { msg: err.message }));
      return;
    }
    const msg = this.fillBlock(m, r, c);
    this.showPasteError(msg);
    this.setPos(r, c);
  }

  showPasteError(msg) {
    this.pasteError.textContent = msg;
    if (msg) this.details.open = true;
  }

  usePasteBox() {
    const text = this.pasteArea.value;
    let m;
    try {
      m = this.o.api.parseMatrix(text);
    } catch (err) {
      this.pasteError.textContent = this.o.t('err.paste', { msg: err.message });
      this.pasteArea.setAttribute('aria-invalid', 'true');
      return;
    }
    if (m.length > this.o.maxDim || m[0].length > this.o.maxDim) {
      this.pasteError.textContent = this.o.t('err.pasteTooBig', { rows: m.length, cols: m[0].length, max: this.o.maxDim });
      return;
    }
    this.pasteArea.removeAttribute('aria-invalid');
    this.pasteError.textContent = '';
    this.cells = m.map((row) => row.map(cellText));
    this.changed(true);
    // done: the box closes and the keyboard lands on the grid it filled
    this.details.open = false;
    this.setPos(0, 0);
  }

  /** Marks the cell (1-based row, column) or row at fault, or clears the marks (row 0). */
  setError(msg, row = 0, column = 0) {
    if (!msg && !this.errorEl.textContent && !this.badEls?.length) return;
    this.errorEl.textContent = msg || '';
    this.el.classList.toggle('has-error', !!msg);
    for (const e of this.badEls ?? []) { e.classList.remove('is-bad'); e.removeAttribute('aria-invalid'); }
    this.badEls = [];
    if (!msg || !row || row > this.tds.length) return;
    if (column && column <= this.tds[row - 1].length) {
      const td = this.tds[row - 1][column - 1];
      td.classList.add('is-bad');
      td.setAttribute('aria-invalid', 'true');
      this.badEls.push(td);
    } else {
      const tr = this.table.tBodies[0].rows[row - 1];
      tr.classList.add('is-bad');
      this.badEls.push(tr);
    }
  }

  /** Highlights every cell (a backward step reads the whole matrix). */
  highlightAll() {
    this.highlight(null, null);
    for (const row of this.tds) for (const td of row) { td.classList.add('is-feed'); this.fed.push(td); }
  }

  /** Highlights a row and/or a column (0-based; null = none) as feeding the explained cell. */
  highlight(row, col) {
    for (const td of this.fed ?? []) td.classList.remove('is-feed');
    this.fed = [];
    if (row == null && col == null) return;
    for (let i = row ?? 0; i <= (row ?? this.tds.length - 1) && i < this.tds.length; i++) {
      for (let j = col ?? 0; j <= (col ?? this.tds[i].length - 1) && j < this.tds[i].length; j++) {
        this.tds[i][j].classList.add('is-feed');
        this.fed.push(this.tds[i][j]);
      }
    }
  }
}

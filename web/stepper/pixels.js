// pixels.js — a panel's cells and numbers drawn into a pixel buffer in JS, then put on its canvas
// at once (putImageData), instead of a path per colour and one fillText per number.
//
// Why: Chromium shapes every new string that fillText draws (an edit changes all 256 of a panel)
// and rasterises the recorded text when the frame is produced; for the two panels on the screen
// that was most of the edit's frame (docs/performance-journal.md, "The numbers from glyph masks"). Here a
// glyph is rasterised once, by the canvas itself, and after that a number is a few copies of its
// glyphs' masks, blended in the ink's colour.
//
// What it draws: rows of cells (rectangles with rounded corners, each in one opaque colour), plain
// rectangles, and text from
// glyph masks made by the canvas (one per character, font, ink and device pixel ratio, at four
// subpixel phases along x, made when first used; fallback fonts work as in fillText, since the
// canvas draws each glyph). Limits: one glyph per UTF-16 code unit, no kerning or ligatures (the
// numbers are in a monospace font with tabular digits); a number is placed by its characters'
// advances; cell edges fall on whole device pixels; baselines too. Patterns (the hatching of −∞
// and the stripes of NaN) are not drawn here: the caller draws them, and their text, on the
// canvas after put().

const HAS_OFFSCREEN = typeof OffscreenCanvas === 'function';
const PHASES = 4; // subpixel positions of a glyph along x (as Skia's)

/** An RGBA pixel as the word a Uint32Array view of ImageData holds (little-endian: R first). */
const word = (r, g, b, a = 255) => ((a << 24) | (b << 16) | (g << 8) | r) >>> 0;

/** '#rrggbb' → [r, g, b]. */
const rgbCache = new Map();
function rgb(hex) {
  let c = rgbCache.get(hex);
  if (!c) {
    const n = parseInt(hex.slice(1), 16);
    c = [(n >> 16) & 255, (n >> 8) & 255, n & 255];
    rgbCache.set(hex, c);
  }
  return c;
}

// ---- glyph masks ---------------------------------------------------------------------------

let glyphCtx = null;
const atlases = new Map(); // `${font}|${ink}|${dpr}` → { font, ink, dpr, glyphs: [], tiles: Map }
// Characters are numbered in the order they are first drawn: an atlas keeps its glyphs in an
// array by that number (a lookup per character of every number drawn).
const SLOT = new Uint16Array(65536);
let slots = 0;
const slotOf = (code) => SLOT[code] || (SLOT[code] = ++slots);

/** The canvas the glyphs are drawn and read on (outside the document). */
function context() {
  if (!glyphCtx) {
    const c = HAS_OFFSCREEN ? new OffscreenCanvas(8, 8) : document.createElement('canvas');
    glyphCtx = c.getContext('2d', { willReadFrequently: true });
  }
  return glyphCtx;
}

/**
 * The glyphs of one font and ink at a device pixel ratio (made as they are first drawn), and
 * their tiles over each background colour: tiles.get(bg)[slot * PHASES + phase].
 */
function atlasOf(font, ink, dpr) {
  const key = `${font}|${ink}|${dpr}`;
  let atlas = atlases.get(key);
  if (!atlas) {
    if (atlases.size > 64) atlases.clear();
    atlas = { font, ink, dpr, glyphs: [], tiles: new Map() };
    atlases.set(key, atlas);
  }
  return atlas;
}

/**
 * The glyph of one character (a UTF-16 code unit) of an atlas: its advance (CSS px) and a mask per
 * subpixel phase ({ x, y: the mask's top-left from the pen on the baseline, device px; w, h;
 * a: coverage 0…255 }).
 */
function glyph(atlas, code) {
  return atlas.glyphs[slotOf(code)] ?? makeGlyph(atlas, code);
}

function makeGlyph(atlas, code) {
  const { font, ink, dpr } = atlas;
  const ch = String.fromCharCode(code);
  const cx = context();
  cx.setTransform(1, 0, 0, 1, 0, 0);
  cx.font = font;
  const mt = cx.measureText(ch);
  const pad = 2;
  const left = Math.ceil(Math.max(0, mt.actualBoundingBoxLeft) * dpr) + pad;
  const right = Math.ceil(Math.max(mt.width, mt.actualBoundingBoxRight) * dpr) + pad + 1;
  const up = Math.ceil(Math.max(0, mt.actualBoundingBoxAscent) * dpr) + pad;
  const down = Math.ceil(Math.max(0, mt.actualBoundingBoxDescent) * dpr) + pad;
  const w = left + right;
  const h = up + down;
  if (cx.canvas.width < w || cx.canvas.height < h) {
    cx.canvas.width = Math.max(cx.canvas.width, w);
    cx.canvas.height = Math.max(cx.canvas.height, h);
  }
  // (after the resize, which resets the context's state)
  cx.font = font;
  cx.fillStyle = ink;
  cx.textAlign = 'left';
  cx.textBaseline = 'alphabetic';
  const masks = [];
  for (let p = 0; p < PHASES; p++) {
    cx.setTransform(1, 0, 0, 1, 0, 0);
    cx.clearRect(0, 0, w, h);
    cx.setTransform(dpr, 0, 0, dpr, left + p / PHASES, up);
    cx.fillText(ch, 0, 0);
    const px = cx.getImageData(0, 0, w, h).data;
    // trimmed to the rows and columns with ink
    let x0 = w;
    let x1 = -1;
    let y0 = h;
    let y1 = -1;
    for (let y = 0; y < h; y++) {
      for (let x = 0; x < w; x++) {
        if (px[(y * w + x) * 4 + 3]) {
          if (x < x0) x0 = x;
          if (x > x1) x1 = x;
          if (y < y0) y0 = y;
          if (y > y1) y1 = y;
        }
      }
    }
    if (x1 < 0) { masks.push({ x: 0, y: 0, w: 0, h: 0, a: new Uint8Array(0) }); continue; }
    const mw = x1 - x0 + 1;
    const mh = y1 - y0 + 1;
    const a = new Uint8Array(mw * mh);
    for (let y = 0; y < mh; y++) for (let x = 0; x < mw; x++) a[y * mw + x] = px[((y + y0) * w + x + x0) * 4 + 3];
    masks.push({ x: x0 - left, y: y0 - up, w: mw, h: mh, a });
  }
  const g = { adv: mt.width, masks };
  atlas.glyphs[slotOf(code)] = g;
  return g;
}

const advances = new Map(); // font → Map(char code → advance, CSS px)
/** The width (CSS px) of text drawn from glyph masks: the sum of its characters' advances. */
export function glyphWidth(font, s) {
  let adv = advances.get(font);
  if (!adv) {
    if (advances.size > 64) advances.clear();
    adv = new Map();
    advances.set(font, adv);
  }
  let w = 0;
  for (let i = 0; i < s.length; i++) {
    const code = s.charCodeAt(i);
    let a = adv.get(code);
    if (a === undefined) {
      const cx = context();
      cx.font = font;
      a = cx.measureText(String.fromCharCode(code)).width;
      adv.set(code, a);
    }
    w += a;
  }
  return w;
}

/**
 * A mask's inked pixels blended in an ink over an opaque colour: their places in the mask (k)
 * and their RGBA words (px); at, for a buffer width, their offsets from the mask's top-left.
 */
function makeTile(m, ink, bg) {
  const [ir, ig, ib] = rgb(ink);
  const [br, bgn, bb] = rgb(bg);
  let n = 0;
  for (let k = 0; k < m.a.length; k++) if (m.a[k]) n++;
  const k = new Int32Array(n);
  const px = new Uint32Array(n);
  for (let i = 0, j = 0; i < m.a.length; i++) {
    const al = m.a[i];
    if (!al) continue;
    const r = Math.round(br + ((ir - br) * al) / 255);
    const g = Math.round(bgn + ((ig - bgn) * al) / 255);
    const b = Math.round(bb + ((ib - bb) * al) / 255);
    k[j] = i;
    px[j++] = word(r, g, b);
  }
  return { k, px, bw: 0, at: null };
}

/** A tile's offsets in a buffer bw pixels wide (kept for the last width). */
function offsets(tile, w, bw) {
  if (tile.bw !== bw) {
    tile.at = new Int32Array(tile.k.length);
    for (let j = 0; j < tile.k.length; j++) tile.at[j] = Math.floor(tile.k[j] / w) * bw + (tile.k[j] % w);
    tile.bw = bw;
  }
  return tile.at;
}

// ---- rounded corners -----------------------------------------------------------------------

const corners = new Map(); // radius (device px) → coverage of the top-left corner's pixels
/** Coverage (0…255) of the R × R pixels of a top-left corner of radius r (4 × 4 samples each). */
function corner(r) {
  let c = corners.get(r);
  if (c) return c;
  const R = Math.ceil(r);
  const a = new Uint8Array(R * R);
  for (let y = 0; y < R; y++) {
    for (let x = 0; x < R; x++) {
      let n = 0;
      for (let sy = 0; sy < 4; sy++) {
        for (let sx = 0; sx < 4; sx++) {
          const dx = x + (sx + 0.5) / 4 - r;
          const dy = y + (sy + 0.5) / 4 - r;
          if (dx >= 0 || dy >= 0 || dx * dx + dy * dy <= r * r) n++;
        }
      }
      a[y * R + x] = Math.round((n * 255) / 16);
    }
  }
  c = { R, a };
  corners.set(r, c);
  return c;
}

// ---- the buffer ----------------------------------------------------------------------------

/** A picture of bw × bh device pixels, drawn in CSS px at a device pixel ratio, put on a canvas. */
export class PixelBuffer {
  constructor() {
    this.sizes = new Map(); // `${bw}x${bh}` → { img, u32 }: the last few sizes (a page's panels come in a few)
    this.img = null; // the picture being drawn, and its Uint32Array view
    this.u32 = null;
    this.dpr = 1;
    this.line = null; // cellRow's line of colours
    this.atlas = null; // the last two atlases text() used
    this.other = null;
    this.gs = []; // text()'s glyphs of one number
  }

  /** Starts a picture: all transparent. */
  begin(bw, bh, dpr) {
    const key = `${bw}x${bh}`;
    let b = this.sizes.get(key);
    if (b) { this.sizes.delete(key); b.u32.fill(0); } else {
      const img = new ImageData(bw, bh);
      b = { img, u32: new Uint32Array(img.data.buffer) };
    }
    this.sizes.set(key, b);
    if (this.sizes.size > 4) this.sizes.delete(this.sizes.keys().next().value);
    this.img = b.img;
    this.u32 = b.u32;
    this.dpr = dpr;
  }

  /**
   * A row of cells that share y and h (CSS px) and a corner radius r: cells is [x, w, '#rrggbb',
   * x, w, colour, …]. Every scanline of the row is written whole (what was there is replaced),
   * from one line of the cells' colours and their corners' coverage: a copy per scanline.
   */
  cellRow(y, h, r, cells) {
    const { dpr, img, u32 } = this;
    const bw = img.width;
    const bh = img.height;
    const Y0 = Math.max(0, Math.round(y * dpr));
    const Y1 = Math.min(bh, Math.round((y + h) * dpr));
    if (Y1 <= Y0) return;
    if (!this.line || this.line.length !== bw) this.line = new Uint32Array(bw);
    const line = this.line;
    line.fill(0);
    const spans = []; // [X0, X1, corner, r, g, b] of the cells with rounded corners
    let maxR = 0;
    for (let k = 0; k < cells.length; k += 3) {
      const X0 = Math.max(0, Math.round(cells[k] * dpr));
      const X1 = Math.min(bw, Math.round((cells[k] + cells[k + 1]) * dpr));
      if (X1 <= X0) continue;
      const [cr, cg, cb] = rgb(cells[k + 2]);
      line.fill(word(cr, cg, cb), X0, X1);
      const rad = Math.min(r * dpr, (X1 - X0) / 2, (Y1 - Y0) / 2);
      if (rad > 0) {
        const c = corner(rad);
        spans.push([X0, X1, c, cr, cg, cb]);
        if (c.R > maxR) maxR = c.R;
      }
    }
    for (let Y = Y0; Y < Y1; Y++) {
      const row = Y * bw;
      u32.set(line, row);
      const cy = Math.min(Y - Y0, Y1 - 1 - Y); // the corner's row, counted from the nearer edge
      if (cy >= maxR) continue;
      for (const [X0, X1, { R, a }, cr, cg, cb] of spans) {
        if (cy >= R) continue;
        for (let k = 0; k < R; k++) {
          const px = word(cr, cg, cb, a[cy * R + k]);
          u32[row + X0 + k] = px;
          u32[row + X1 - 1 - k] = px;
        }
      }
    }
  }

  /** A filled rectangle, square-cornered: x, y, w, h in CSS px, an opaque '#rrggbb'. */
  rect(x, y, w, h, color) {
    const { dpr, img, u32 } = this;
    const X0 = Math.max(0, Math.round(x * dpr));
    const X1 = Math.min(img.width, Math.round((x + w) * dpr));
    const Y0 = Math.max(0, Math.round(y * dpr));
    const Y1 = Math.min(img.height, Math.round((y + h) * dpr));
    const solid = word(...rgb(color));
    for (let Y = Y0; Y < Y1 && X0 < X1; Y++) u32.fill(solid, Y * img.width + X0, Y * img.width + X1);
  }

  /**
   * Text: s in font and ink ('#rrggbb'), its anchor x and baseline y in CSS px, align 'left',
   * 'right' or 'center'. Blended over what is there (cells drawn before it); bg, the opaque
   * '#rrggbb' that the text is known to sit on, lets each glyph be copied from a tile of its
   * pixels already blended over that colour (made once per glyph, phase and colour).
   */
  text(s, x, y, font, ink, align = 'left', bg = null) {
    const { dpr, img, u32 } = this;
    const bw = img.width;
    const bh = img.height;
    // the last two atlases at hand (the numbers of a panel alternate between a dark and a light ink)
    let atlas = this.atlas;
    if (!atlas || atlas.font !== font || atlas.ink !== ink || atlas.dpr !== dpr) {
      const o = this.other;
      atlas = o && o.font === font && o.ink === ink && o.dpr === dpr ? o : atlasOf(font, ink, dpr);
      this.other = this.atlas;
      this.atlas = atlas;
    }
    let tiles = null;
    if (bg !== null) {
      tiles = atlas.tiles.get(bg);
      if (!tiles) { tiles = []; atlas.tiles.set(bg, tiles); }
    }
    const gs = this.gs;
    let width = 0;
    for (let i = 0; i < s.length; i++) { const g = glyph(atlas, s.charCodeAt(i)); gs[i] = g; width += g.adv; }
    let pen = (align === 'right' ? x - width : align === 'center' ? x - width / 2 : x) * dpr;
    const base = Math.round(y * dpr);
    for (let c = 0; c < s.length; c++) {
      const g = gs[c];
      let ix = Math.floor(pen);
      let p = Math.round((pen - ix) * PHASES);
      if (p === PHASES) { ix++; p = 0; }
      pen += g.adv * dpr;
      const m = g.masks[p];
      const mx = ix + m.x;
      const my = base + m.y;
      const inside = mx >= 0 && my >= 0 && mx + m.w <= bw && my + m.h <= bh;
      if (tiles && inside) {
        // over a known colour, wholly inside: the glyph's inked pixels copied from its tile
        const ti = SLOT[s.charCodeAt(c)] * PHASES + p;
        const tile = tiles[ti] ?? (tiles[ti] = makeTile(m, ink, bg));
        const at = offsets(tile, m.w, bw);
        const px = tile.px;
        const o = my * bw + mx;
        for (let j = 0; j < at.length; j++) u32[o + at[j]] = px[j];
      } else {
        this.blend(m, mx, my, Math.max(0, -mx), Math.min(m.w, bw - mx), Math.max(0, -my), Math.min(m.h, bh - my), ink);
      }
    }
  }

  /** A mask blended in an ink over what is there (source-over on unpremultiplied RGBA). */
  blend(m, mx, my, xa, xb, ya, yb, ink) {
    const d = this.img.data;
    const bw = this.img.width;
    const [ir, ig, ib] = rgb(ink);
    for (let yy = ya; yy < yb; yy++) {
      let i = ((my + yy) * bw + mx + xa) * 4;
      let k = yy * m.w + xa;
      for (let xx = xa; xx < xb; xx++, i += 4, k++) {
        const al = m.a[k];
        if (!al) continue;
        const da = d[i + 3];
        const f = (da * (255 - al)) / 255;
        const oa = al + f;
        d[i] = (ir * al + d[i] * f) / oa;
        d[i + 1] = (ig * al + d[i + 1] * f) / oa;
        d[i + 2] = (ib * al + d[i + 2] * f) / oa;
        d[i + 3] = oa;
      }
    }
  }

  /** Puts the picture on a 2D context (replacing every pixel). */
  put(ctx) {
    ctx.putImageData(this.img, 0, 0);
  }
}

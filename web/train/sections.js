// sections.js — the training page's sections, declared once, in the page's order. The page
// (main.js) shows them all; <gpt-lab> (../gpt-lab.js) shows those a lesson names. Both make them
// with makeSections() and lay them out with assemble(), which also numbers the page's headings
// from this list ("5 · Attention maps"): a section added here is made, placed and numbered in both.
//
// Each entry: name (the <gpt-lab sections="…"> word, and ctx.sections' key), make(ctx) → the
// section (a class with the interface section.js describes), lab: whether a lesson's <gpt-lab> may
// show it (opening a model and the block's walk are the page's: they load its second core).
import { el } from '../common/ui.js';
import { DataSection } from './section-data.js';
import { TrainingSection } from './section-training.js';
import { OpenSection } from './section-open.js';
import { ExperimentsSection } from './section-experiments.js';
import { MapsSection } from './section-maps.js';
import { WalkSection } from './section-walk.js';
import { NextTokenSection } from './section-next-token.js';
import { SurprisalSection } from './section-surprisal.js';
import { InterpSection } from './section-interp.js';
import { GenerationSection } from './section-generation.js';
import { CheckpointsSection } from './section-checkpoints.js';
import { RunsSection } from './section-runs.js';

export const SECTION_LIST = [
  { name: 'data', make: (ctx) => new DataSection(ctx), lab: true },
  { name: 'training', make: (ctx) => new TrainingSection(ctx), lab: true },
  { name: 'open', make: (ctx) => new OpenSection(ctx), lab: false },
  { name: 'experiments', make: (ctx) => new ExperimentsSection(ctx), lab: true },
  { name: 'maps', make: (ctx) => new MapsSection(ctx), lab: true },
  { name: 'walk', make: (ctx) => new WalkSection(ctx, { maps: () => ctx.rt.maps, sampling: () => ctx.sections.generation.sampling() }), lab: false },
  { name: 'next', make: (ctx) => new NextTokenSection(ctx), lab: true },
  { name: 'surprisal', make: (ctx) => new SurprisalSection(ctx), lab: true },
  { name: 'generation', make: (ctx) => new GenerationSection(ctx), lab: true },
  { name: 'checkpoints', make: (ctx) => new CheckpointsSection(ctx), lab: true },
  { name: 'runs', make: (ctx) => new RunsSection(ctx), lab: true },
  { name: 'interp', make: (ctx) => new InterpSection(ctx), lab: true },
];

/** The names of the sections a lesson's <gpt-lab> may show, in the page's order. */
export const LAB_SECTIONS = SECTION_LIST.filter((s) => s.lab).map((s) => s.name);

/** The sections of `names` (default: every one) made for a context, {name: section} in the page's order. */
export function makeSections(ctx, names = SECTION_LIST.map((s) => s.name)) {
  return Object.fromEntries(SECTION_LIST.filter((s) => names.includes(s.name)).map((s) => [s.name, s.make(ctx)]));
}

/**
 * Renders every section of ctx.sections and returns the parts of those named in `shown`, in the
 * page's order: data and training side by side in one row (.tr-top), then the others. numbered:
 * each heading starts with its place among the shown ("3 · Open a model…"), as on the page; a
 * lesson's few sections go without numbers. Sets ctx.shown (ctx.onPage reads it).
 */
export function assemble(ctx, shown, { numbered }) {
  ctx.shown = SECTION_LIST.map((s) => s.name).filter((n) => shown.includes(n) && ctx.sections[n]);
  // every section made is rendered (one not shown keeps working elements, out of the document)
  const rendered = Object.fromEntries(Object.entries(ctx.sections).map(([n, sec]) => [n, sec.render()]));
  const parts = ctx.shown.map((n) => [n, rendered[n]]);
  if (numbered) {
    parts.forEach(([, part], i) => {
      const h = part.querySelector('h2');
      if (h) h.textContent = `${i + 1} · ${h.textContent}`;
    });
  }
  const top = el('div', 'tr-top');
  const rest = [];
  for (const [n, part] of parts) {
    if (n === 'data' || n === 'training') top.append(part);
    else rest.push(part);
  }
  return { top: top.childElementCount ? top : null, rest };
}

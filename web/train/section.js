// section.js — what every section of the training page (section-*.js) has: the page's context
// (context.js), its runtime (ctx.rt), the elements of its last render (dom) and, for the sections
// that draw losses, one loss chart (chart.js). A render starts with newCard(): the section's card
// (ui.js card: a <section> labelled by its <h2>, with its lede), the last render's elements and
// chart forgotten.
//
// A section's interface: render() → its element (the page renders again on a language or a link);
// mounted() once that element is in the document; refresh() (writes what the state and the
// runtime say, only what changed); onMessage(m) where a worker's events are routed to it.
import { card } from '../common/ui.js';

export class Section {
  /** @param {object} ctx the page's context (context.js) */
  constructor(ctx) {
    this.ctx = ctx;
    this.rt = ctx.rt;
    this.dom = {};
    this.chart = null;
  }

  /** Starts a render: the section's card (ui.js card options), with nothing of the last render kept. */
  newCard(opts) {
    this.chart?.destroy();
    this.chart = null;
    this.dom = {};
    return card(opts);
  }

  /** After the render is in the document: nothing, unless the section measures its boxes. */
  mounted() {}

  /** The points the section's loss chart holds (for tests). */
  chartPoints() {
    return this.chart?.points() ?? 0;
  }
}

// print.js — printing the stepper (Ctrl+P, "Save as PDF"): every panel with its numbers. On screen
// only the panels near it are painted (panels.js: IntersectionObservers, the rest in idle time),
// and the step-by-step view shows one step; so before the browser lays out the printed pages
// (beforeprint, or the print media query turning on: page.pdf() and some browsers fire only one),
// every step's panels are shown and each is painted and its table written now; after printing,
// the step view comes back as it was. stepper.css's @media print does the rest (no toolbar, no
// sticky boxes, no content-visibility, panels kept whole on a page).
// Limits: a panel wider than the paper (64 columns) is cut at the paper's edge, as on a narrow
// screen; the heatmap-only panels of large inputs (past 32 tokens) print their colours, not numbers.
import { flushPending } from './panels.js';
import { layoutSteps } from './pipeline.js';

/** Installs the print hooks on a mounted stepper's context; → a function that removes them. */
export function hookPrint(ctx) {
  let printing = false;
  let wasStep = false;
  const before = () => {
    if (printing || ctx.destroyed) return;
    printing = true;
    ctx.root.classList.add('aps-printing');
    wasStep = ctx.state.view === 'step';
    if (wasStep) {
      ctx.state.view = 'all'; // for the layout only: the state (and the permalink) are not written
      layoutSteps(ctx);
    }
    flushPending();
    for (const v of ctx.views.values()) {
      if (v.fig?.hidden) continue;
      v.view.ensurePainted?.();
      v.view.syncText?.();
      for (const sub of [v.stats, ...(v.multi ?? []).map((m) => m.view)]) {
        sub?.ensurePainted?.();
        sub?.syncText?.();
      }
    }
  };
  const after = () => {
    if (!printing) return;
    printing = false;
    ctx.root.classList.remove('aps-printing');
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

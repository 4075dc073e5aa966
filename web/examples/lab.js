// lab.js — the example course page's own record of the learner's runs (examples/lab.html): it
// listens to the <gpt-lab> elements' events and writes a line under each. A real course would
// send it to its own gradebook; nothing here leaves the page.
const line = (e) => document.querySelector(`[data-progress-for="${CSS.escape(e.target.id)}"]`);
const loss = (v) => (v == null ? '—' : v.toFixed(3));

document.addEventListener('gpt-lab-progress', (e) => {
  const out = line(e);
  if (out && !out.classList.contains('is-solved')) out.textContent = `Progress: step ${e.detail.step} of ${e.detail.steps}, loss ${loss(e.detail.loss)}.`;
});
document.addEventListener('gpt-lab-done', (e) => {
  const out = line(e);
  if (!out) return;
  out.textContent = `Progress: trained — ${e.detail.step} steps, loss ${loss(e.detail.loss)}, validation loss ${loss(e.detail.val)}.`;
  out.classList.add('is-solved');
});
document.addEventListener('gpt-lab-diverged', (e) => {
  const out = line(e);
  if (out) out.textContent = `Progress: the run diverged at step ${e.detail.step} (${e.detail.message}).`;
});

// progress.js — the example course page's own progress record: it listens to the steppers'
// 'stepper-exercise' events (one per check of a learner's answers) and writes the result under
// each exercise. A real course would send it to its own gradebook; nothing here leaves the page.
document.addEventListener('stepper-exercise', (e) => {
  const { right, total, solved, revealed, reset } = e.detail;
  const out = document.querySelector(`[data-progress-for="${CSS.escape(e.target.id)}"]`);
  if (!out) return;
  out.textContent = reset ? 'Progress: started again.'
    : revealed ? `Progress: answers shown (${right} of ${total} were right).`
    : solved ? `Progress: solved — ${total} of ${total} right.`
      : `Progress: ${right} of ${total} right so far.`;
  out.classList.toggle('is-solved', solved);
});

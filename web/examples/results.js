// results.js — the gradebook of the example quiz page (results.html): sets each stepper iframe's
// address (the stepper's site, `?tool=` or this one; the exercise; report-to = this page's
// origin), takes the results the frames post (embed-results.js: checked origin, checked fields),
// and writes them into the table. It asks each frame for its result as it loads, so the table
// shows where each exercise stands even before the learner checks (and, where the browser lets a
// framed page keep its storage, the answers left before a reload). A real course would store the
// results; nothing here leaves the page.
import { onExerciseResult, requestExerciseResult } from '../embed-results.js';

const tool = new URL(new URLSearchParams(location.search).get('tool') || location.origin).origin;
const toolBase = new URL('../', import.meta.url).pathname; // where the playground is on the tool's site
const frames = [...document.querySelectorAll('iframe[data-embed]')];
for (const f of frames) {
  f.addEventListener('load', () => requestExerciseResult(f, tool));
  f.src = `${tool}${toolBase}embed.html#${f.dataset.embed}&report-to=${encodeURIComponent(location.origin)}`;
}

const rows = new Map();
function row(frame) {
  if (!rows.has(frame.id)) {
    const tr = document.createElement('tr');
    tr.dataset.frame = frame.id;
    for (let i = 0; i < 6; i++) tr.append(document.createElement('td'));
    tr.cells[0].textContent = frame.title;
    document.querySelector('#gradebook tbody').append(tr);
    rows.set(frame.id, tr);
  }
  return rows.get(frame.id);
}

onExerciseResult(tool, (r, frame) => {
  const tr = row(frame);
  const state = r.reset ? 'started again' : r.revealed ? 'answers shown' : r.solved ? 'solved' : r.right + r.wrong ? 'in progress' : 'not checked';
  [r.right, r.wrong, r.empty, `${Math.round(r.score * 100)} %`, state].forEach((v, i) => { tr.cells[i + 1].textContent = String(v); });
  tr.classList.toggle('is-solved', r.solved);
});

document.getElementById('ask-results').addEventListener('click', () => {
  for (const f of frames) requestExerciseResult(f, tool);
});

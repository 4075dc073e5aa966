// embed-resize.js — for the course page that holds <iframe src=".../embed.html#…">: fits each
// iframe's height to its content. Include once; it handles every stepper iframe on the page.
//
//   <script type="module" src="/path/to/embed-resize.js"></script>
//   <iframe class="attention-stepper-frame" src="/path/to/embed.html#preset=causal-4" title="…"></iframe>
//
// embed.html posts {type: 'attention-stepper:height', height} to its parent on every size change;
// this sets the height of the iframe that sent it (matched by its window, so a message from any
// other frame is ignored). Only the height is taken from the message, as a number, clamped.
const MIN = 80;
const MAX = 20000;

window.addEventListener('message', (e) => {
  const d = e.data;
  if (!d || d.type !== 'attention-stepper:height' || typeof d.height !== 'number' || !Number.isFinite(d.height)) return;
  for (const frame of document.querySelectorAll('iframe')) {
    if (frame.contentWindow === e.source) {
      // CSSOM, not a style attribute in markup: allowed by style-src 'self'
      frame.style.height = `${Math.max(MIN, Math.min(MAX, Math.ceil(d.height)))}px`;
      frame.dispatchEvent(new CustomEvent('attention-stepper-resize', { detail: { height: d.height } }));
      break;
    }
  }
});

// Frames that loaded before this script ran: ask them for their height again.
for (const frame of document.querySelectorAll('iframe')) {
  try { frame.contentWindow?.postMessage({ type: 'attention-stepper:request-height' }, '*'); } catch { /* cross-origin: fine */ }
}

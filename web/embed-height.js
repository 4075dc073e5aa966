// embed-height.js — the iframe side of the height protocol (web/embed-resize.js is the course
// page's side): an iframe page of the playground (embed.html, lab-embed.html) posts its height to
// its parent on every size change, and again when the parent asks:
//   frame → parent  {type: 'attention-stepper:height', height: <CSS px>, href: location.href}
//   parent → frame  {type: 'attention-stepper:request-height'}
// The height is no secret (the parent sees the frame's box anyway), so it goes to any parent.

export const HEIGHT_TYPE = 'attention-stepper:height';
export const REQUEST_HEIGHT_TYPE = 'attention-stepper:request-height';

/**
 * Starts the reports. Returns post(), which posts the height now if it changed (a page calls it
 * once its content is in, before any resize).
 * @returns {() => void}
 */
export function reportHeight() {
  let last;
  const post = () => {
    const h = Math.ceil(document.documentElement.getBoundingClientRect().height);
    if (h === last) return;
    last = h;
    if (window.parent !== window) window.parent.postMessage({ type: HEIGHT_TYPE, height: h, href: location.href }, '*');
  };
  new ResizeObserver(post).observe(document.documentElement);
  window.addEventListener('message', (e) => {
    if (e.source !== window.parent || window.parent === window || e.data?.type !== REQUEST_HEIGHT_TYPE) return;
    last = undefined;
    post();
  });
  return post;
}

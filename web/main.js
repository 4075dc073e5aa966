// main.js — page bootstrap: mount the Attention Stepper (web/stepper/stepper.js) on #app, with
// sharing (web/stepper/share.js: permalink, copy-link, export).
// No inline scripts or styles, so the page runs under a strict Content-Security-Policy.
import { el } from './common/ui.js';
import { mountStepper } from './stepper/stepper.js';
import { enableSharing } from './stepper/share.js';
import { createI18n, storedLang } from './stepper/i18n.js';

const app = document.getElementById('app');

try {
  const stepper = await mountStepper(app, {});
  // permalink in the URL (#s=…), copy-link, and export of any matrix or panel
  const sharing = enableSharing(stepper, app);
  // a link that names a cell (state.focus) lands the keyboard on it
  if (sharing.permalink.restored && stepper.getState().focus) stepper.focusCell();
  app.dataset.status = 'ready';
  // for tests and the console: the controller (getState / setState / on / exerciseOpen / destroy)
  window.attentionStepper = stepper;
} catch (e) {
  app.dataset.status = 'failed';
  // the language the stepper would have shown; the message says what to run (a clone without web/gen/)
  const { t } = createI18n(storedLang() ?? 'en');
  const p = el('p', 'boot failed', t('boot.failed', { message: e?.message ?? e }));
  p.setAttribute('role', 'alert');
  app.replaceChildren(p);
}

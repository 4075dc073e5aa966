// destroy.spec.mjs — the stepper controller's destroy(): afterwards none of its listeners is
// called ('change', 'trace' and 'exercise' alike), even by a control that something still holds
// after the stepper removed it from the page.
import { test, expect } from './fixtures.mjs';
import { ready } from './stepper-helpers.mjs';

test('destroy() removes every listener: change, trace and exercise', async ({ page }) => {
  await ready(page);
  await page.locator('select[data-key="exercise"]').selectOption('identity-softmax');
  await expect(page.locator('.aps-exercise')).toBeVisible();
  const { before, after, left } = await page.evaluate(() => {
    const ctl = window.attentionStepper;
    const calls = { change: 0, trace: 0, exercise: 0 };
    for (const ev of Object.keys(calls)) ctl.on(ev, () => { calls[ev] += 1; });
    const app = document.getElementById('app');
    const control = (key) => app.querySelector(`[data-key="${key}"]`);
    const [check, reset, causal] = ['ex.check', 'ex.reset', 'causal'].map(control);
    // while mounted, each of them is heard
    check.click(); // 'exercise'
    causal.click(); // a compute: 'trace', then 'change'
    const heard = { ...calls };
    ctl.destroy();
    // the removed controls still run their handlers when clicked: nobody may hear them
    check.click();
    reset.click();
    causal.click();
    return { before: heard, after: { ...calls }, left: app.childElementCount };
  });
  expect(before).toEqual({ change: 1, trace: 1, exercise: 1 });
  expect(after).toEqual(before);
  expect(left).toBe(0);
});

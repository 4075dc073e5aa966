// variant_panels.test.mjs — the examples of the FlashAttention and MLA panels
// (web/stepper/panels-flash.js) are the golden cases the e2e test reads its numbers from
// (tests/golden/attention_cases.json: flash_16_tokens_causal, mla_latent_rope_halves), and the
// panels' number format.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadGolden } from './load.mjs';
import { FLASH_EXAMPLE, MLA_EXAMPLE, num } from '../../web/stepper/panels-flash.js';

const golden = await loadGolden();
const spec = (name) => golden.cases.find((c) => c.name === name).spec;

test('the panels\' examples are the golden cases', () => {
  assert.deepEqual(FLASH_EXAMPLE, spec('flash_16_tokens_causal'));
  assert.deepEqual(MLA_EXAMPLE, spec('mla_latent_rope_halves'));
});

test('numbers: 4 decimals, −∞ for a masked entry, no negative zero', () => {
  assert.equal(num(0.123456), '0.1235');
  assert.equal(num('-inf'), '−∞');
  assert.equal(num(-0.00001), '0.0000');
});

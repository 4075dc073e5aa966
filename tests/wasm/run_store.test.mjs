// run_store.test.mjs — the plain-data parts of the training page's kept runs (web/train/run-store.js)
// in Node: the losses' CSV, the browser's errors sorted into the kinds the page names, and a store
// asked for where there is no IndexedDB. The store itself runs in Chromium (tests/e2e/runs.spec.mjs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { lossCsv, storeError, openRunStore, StoreError, storageEstimate } from '../../web/train/run-store.js';

test('the losses as CSV: the gpt CLI log’s column names, one row per step, empty cells where a step has no value', () => {
  const csv = lossCsv({ steps: [1, 2, 3, 4], train: [2.5, 2.25, NaN, 2], valSteps: [0, 2, 4], val: [2.6, 2.4, 2.1] });
  assert.equal(csv, 'step,loss,val_loss\n0,,2.6\n1,2.5,\n2,2.25,2.4\n3,NaN,\n4,2,2.1\n');
  assert.equal(lossCsv({ steps: [], train: [], valSteps: [], val: [] }), 'step,loss,val_loss\n');
});

test('the losses as CSV: steps in numeric order past 9 (10 after 9, 100 after 11), not as text', () => {
  const csv = lossCsv({ steps: [9, 10, 11, 100], train: [1.5, 1.25, 1, 0.75], valSteps: [0, 10, 100], val: [2, 1.5, 0.5] });
  assert.equal(csv, 'step,loss,val_loss\n0,,2\n9,1.5,\n10,1.25,1.5\n11,1,\n100,0.75,0.5\n');
});

test('the browser’s errors: a full quota, no storage, anything else with its message', () => {
  assert.equal(storeError({ name: 'QuotaExceededError', message: 'full' }).kind, 'quota');
  assert.equal(storeError({ name: 'UnknownError', message: 'Quota exceeded while writing' }).kind, 'quota');
  assert.equal(storeError({ name: 'SecurityError', message: 'no' }).kind, 'unavailable');
  const other = storeError({ name: 'DataError', message: 'bad key' });
  assert.equal(other.kind, 'failed');
  assert.equal(other.message, 'bad key');
  const same = new StoreError('quota', 'x');
  assert.equal(storeError(same), same);
});

test('no IndexedDB: opening the store fails as "unavailable", and no estimate is made up', async () => {
  await assert.rejects(openRunStore({ indexedDB: undefined }), (e) => e instanceof StoreError && e.kind === 'unavailable');
  assert.equal(await storageEstimate(undefined), null);
  assert.deepEqual(await storageEstimate({ estimate: async () => ({ usage: 10, quota: 100 }) }), { usage: 10, quota: 100 });
  assert.equal(await storageEstimate({ estimate: async () => { throw new Error('no'); } }), null);
});

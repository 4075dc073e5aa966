// run-store.js — the training page's kept runs in the browser's IndexedDB: each run's record (its
// settings, the core's info, its loss series, a pair's facts when it is one of an experiment's two
// runs) and its checkpoint (the core's safetensors bytes, as the checkpoints section downloads
// them). Records and checkpoints live in two object stores of one database, written and deleted in
// one transaction: a run is kept whole or not at all, and the list can be read without reading
// the checkpoints.
//
// Why IndexedDB and not OPFS for the bytes: OPFS reads and writes a checkpoint faster
// (bench/run_store_bench.mjs measures both in Chromium; in one loaded sitting a 1.3 MB
// checkpoint took a median 0.29 s to keep in IndexedDB and 0.10 s in OPFS, 0.16 s and 0.04 s to
// read back), but a run is kept once per pause or end, off the page's thread, and a learner does
// not see a tenth of a second there. What IndexedDB gives that OPFS cannot: one transaction over
// the record and its checkpoint, and over both runs of a pair, so a run (or a pair) is kept whole
// or not at all, with no checkpoint left without its record when a tab closes between two writes;
// and it is there in every browser the page supports, where OPFS's createWritable() came late to
// some (its synchronous handles are worker-only).
//
// Every failure is a StoreError with .kind: 'unavailable' (no IndexedDB: some private windows,
// a browser that blocks storage), 'quota' (the origin's quota is full; nothing of the write is
// kept) or 'failed' (anything else, with the browser's message). Nothing is dropped silently: the
// caller says which run was not kept.
//
//   const store = await openRunStore();            // or openRunStore({ indexedDB: fake, name })
//   await store.put([{ meta: { id, ... }, bytes }]); // several runs (a pair): all or none
//   const metas = await store.list();                // the records, oldest first
//   const bytes = await store.checkpoint(id);        // a Uint8Array
//   await store.remove([id, ...]);
//
// Limits: the records must be structured-cloneable plain data; meta.id is the key.

export const DB_NAME = 'attention-playground-runs';
const VERSION = 1;
const RUNS = 'runs';
const CKPTS = 'checkpoints';

/** A store operation that failed: kind 'unavailable' | 'quota' | 'failed'. */
export class StoreError extends Error {
  constructor(kind, message) {
    super(message);
    this.name = 'StoreError';
    this.kind = kind;
  }
}

/** The browser's error (a DOMException, an abort) as a StoreError. */
export function storeError(e) {
  if (e instanceof StoreError) return e;
  const name = e?.name ?? '';
  if (name === 'QuotaExceededError' || /quota/i.test(e?.message ?? '')) return new StoreError('quota', e?.message || name);
  if (name === 'SecurityError' || name === 'InvalidStateError') return new StoreError('unavailable', e?.message || name);
  return new StoreError('failed', e?.message || name || String(e));
}

/** An IDBRequest as a Promise. */
function request(r) {
  return new Promise((resolve, reject) => {
    r.onsuccess = () => resolve(r.result);
    r.onerror = (ev) => { ev.preventDefault?.(); reject(storeError(r.error)); };
  });
}

/** Runs `fn(stores)` in one transaction; resolves with fn's value once the transaction commits. */
function transact(db, mode, fn) {
  return new Promise((resolve, reject) => {
    let tx;
    let value;
    try {
      tx = db.transaction([RUNS, CKPTS], mode);
    } catch (e) {
      reject(storeError(e));
      return;
    }
    tx.oncomplete = () => resolve(value);
    tx.onabort = () => reject(storeError(tx.error ?? new Error('the transaction was aborted')));
    tx.onerror = (ev) => ev.preventDefault?.(); // the abort that follows says why
    try {
      Promise.resolve(fn({ runs: tx.objectStore(RUNS), ckpts: tx.objectStore(CKPTS) })).then((v) => { value = v; }, () => {});
    } catch (e) {
      // a synchronous throw (a put the browser refuses outright): nothing of the transaction stays
      try { tx.abort(); } catch { /* already finished */ }
      reject(storeError(e));
    }
  });
}

/**
 * Opens (and on first use creates) the database.
 * @param {{indexedDB?: IDBFactory, name?: string}} [o] the factory (the browser's by default) and the database's name
 * @returns {Promise<{list, checkpoint, put, remove, estimate}>} rejects with a StoreError
 */
export async function openRunStore({ indexedDB = globalThis.indexedDB, name = DB_NAME } = {}) {
  if (!indexedDB) throw new StoreError('unavailable', 'IndexedDB is not available');
  let db;
  try {
    const open = indexedDB.open(name, VERSION);
    open.onupgradeneeded = () => {
      const d = open.result;
      if (!d.objectStoreNames.contains(RUNS)) d.createObjectStore(RUNS, { keyPath: 'id' });
      if (!d.objectStoreNames.contains(CKPTS)) d.createObjectStore(CKPTS, { keyPath: 'id' });
    };
    db = await request(open);
  } catch (e) {
    const err = storeError(e);
    // opening fails in the browsers that give a private window no IndexedDB
    throw err.kind === 'quota' ? err : new StoreError('unavailable', err.message);
  }
  return {
    /** Every kept run's record (without its checkpoint), oldest first by meta.created. */
    async list() {
      const all = await transact(db, 'readonly', ({ runs }) => request(runs.getAll()));
      return all.sort((a, b) => (a.created ?? 0) - (b.created ?? 0));
    },
    /** One run's checkpoint bytes. */
    async checkpoint(id) {
      const row = await transact(db, 'readonly', ({ ckpts }) => request(ckpts.get(id)));
      if (!row) throw new StoreError('failed', `no checkpoint kept for run ${id}`);
      return row.bytes instanceof Uint8Array ? row.bytes : new Uint8Array(row.bytes);
    },
    /** Keeps (or replaces) runs, each {meta, bytes}: all in one transaction, so all or none. */
    put(items) {
      return transact(db, 'readwrite', ({ runs, ckpts }) => {
        for (const { meta, bytes } of items) {
          runs.put(meta);
          ckpts.put({ id: meta.id, bytes });
        }
      });
    },
    /** Deletes runs and their checkpoints, in one transaction. */
    remove(ids) {
      return transact(db, 'readwrite', ({ runs, ckpts }) => {
        for (const id of ids) { runs.delete(id); ckpts.delete(id); }
      });
    },
    close() { db.close(); },
  };
}

/** The browser's figures for this origin's storage ({usage, quota} in bytes), or null. */
export async function storageEstimate(storage = globalThis.navigator?.storage) {
  try {
    const e = await storage?.estimate?.();
    return e && Number.isFinite(e.quota) ? { usage: e.usage ?? 0, quota: e.quota } : null;
  } catch {
    return null;
  }
}

/** The loss series as CSV, with the gpt CLI's log's column names (a cell is empty where that step has no value). */
export function lossCsv(series) {
  const rows = new Map();
  const row = (s) => {
    if (!rows.has(s)) rows.set(s, { loss: '', val: '' });
    return rows.get(s);
  };
  series.steps.forEach((s, i) => { row(s).loss = String(series.train[i]); });
  series.valSteps.forEach((s, i) => { row(s).val = String(series.val[i]); });
  const lines = ['step,loss,val_loss'];
  for (const s of [...rows.keys()].sort((a, b) => a - b)) lines.push(`${s},${rows.get(s).loss},${rows.get(s).val}`);
  return `${lines.join('\n')}\n`;
}

// client.js — the page's side of the training worker (worker.js): requests as Promises, the
// worker's events to listeners. A worker that fails to start, or dies, rejects every pending
// request with its message and tells the listeners ({event: 'crash', message}).

/** A request the worker or the core refused: .field names the input at fault ('' if none). */
export class TrainError extends Error {
  constructor(message, field = '') {
    super(message);
    this.name = 'TrainError';
    this.field = field;
  }
}

export function startWorker() {
  const worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
  let nextId = 1;
  const pending = new Map();
  const listeners = new Set();
  let dead = null;

  const die = (message) => {
    dead = message;
    for (const { reject } of pending.values()) reject(new TrainError(message, 'worker'));
    pending.clear();
    for (const fn of listeners) fn({ event: 'crash', message });
  };

  worker.onmessage = (e) => {
    const m = e.data;
    if (m && m.id) {
      const p = pending.get(m.id);
      if (!p) return;
      pending.delete(m.id);
      if (m.ok) p.resolve(m.result);
      else p.reject(new TrainError(m.error?.message ?? 'the worker failed', m.error?.field ?? ''));
      return;
    }
    for (const fn of listeners) {
      try { fn(m); } catch (err) { setTimeout(() => { throw err; }); }
    }
  };
  worker.onerror = (e) => {
    e.preventDefault?.();
    die(`the training worker stopped: ${e.message || 'it could not load (see the browser console)'}`);
  };
  worker.onmessageerror = () => die('the training worker sent a message that could not be read');

  return {
    /** Sends one request; resolves with its result, rejects with a TrainError. */
    call(op, args = {}, transfer = []) {
      if (dead) return Promise.reject(new TrainError(dead, 'worker'));
      const id = nextId++;
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject });
        worker.postMessage({ id, op, ...args }, transfer);
      });
    },
    /** Listens to the worker's events; returns the unsubscribe function. */
    on(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
    terminate() {
      worker.terminate();
      die('the training worker was stopped');
    },
  };
}

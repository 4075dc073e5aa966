// gpt-full.js — the GPT core's full module for web/gpt.js: web/gen/gpt_core_full.mjs + .wasm,
// the same core with the code that opens models trained elsewhere, fine-tunes them and walks a
// position through the block, which gpt_core (the page's start) leaves out (src/api/gpt_full.h).
// It is loaded once, on the first opening or walk (in Node at once: loadGpt awaits load()), with
// the factory's options; in the threads build the module itself has that code and is used as is.
// Here too: openModel's plumbing (the full module made, then web/gpt-open.js, the opening
// protocol and the file's reading, loaded on the first opening) and the memory left for opening.
// Limits: one full module per loadGpt; it is never unloaded (wasm memory never shrinks).

import { GptError } from './common/gpt-error.js';

export function isNode() {
  return typeof process === 'object' && typeof process.versions?.node === 'string' && typeof window === 'undefined';
}

// The full module, made with the factory's options; in Node its bytes are read here (the web
// build cannot fetch in Node).
async function loadFullModule(factory) {
  const { wasmBinary, ...options } = factory;
  try {
    if (isNode()) {
      const { readFile } = await import('node:fs/promises');
      options.wasmBinary = await readFile(new URL('./gen/gpt_core_full.wasm', import.meta.url));
    }
    const { default: createModule } = await import('./gen/gpt_core_full.mjs');
    return await createModule(options);
  } catch (e) {
    throw new GptError(`the core's full module (gpt_core_full, for opening models and the walk) could not be loaded: ${e?.message ?? e}`, { field: 'piece' });
  }
}

/**
 * The full module beside M (the module loadGpt made from `factory`'s options); answer parses the
 * core's answers. Returns {module (null until loaded; M itself in the threads build, which has the
 * opening and the walk), load(), setKernels(tier) (the tier for it too, now or once loaded),
 * withWalk(session, f), openModel(files, options, adopt), openMemory()}.
 */
export function fullModule(M, factory, answer) {
  let full = M.full_loaded() ? M : null;
  let loading = null;
  let tier = null; // the kernels last chosen (setKernels)
  const load = () => {
    if (full) return Promise.resolve();
    loading ??= loadFullModule(factory).then(
      (F) => {
        if (tier !== null) F.gpt_kernels(tier);
        full = F;
      },
      (e) => {
        loading = null;
        throw e;
      });
    return loading;
  };
  return {
    get module() {
      return full;
    },
    load,
    setKernels(t) {
      tier = t;
      if (full && full !== M) full.gpt_kernels(t);
    },
    // The session the walk runs on: the run's own when its module has the walk (a run of the
    // full module: an opened model; the threads build), else for this one call a copy of its
    // model in the full module (its checkpoint, the same numbers), freed after.
    withWalk(session, f) {
      if (M.full_loaded() || (full && session instanceof full.GptSession)) return f(session);
      if (!full) throw new GptError('the walk is in the full module: await gpt.loadFull() first', { field: 'piece' });
      const bytes = session.save();
      if (bytes === null) throw new GptError(session.last_error(), { field: 'checkpoint' });
      const copy = new full.GptSession();
      try {
        answer(copy.load(bytes, ''));
        return f(copy);
      } finally {
        copy.delete();
      }
    },
    // gpt.openModel: the files opened into a new session of the full module (gpt-open.js), which
    // adopt(session, opened) makes a run.
    async openModel(files, options, adopt) {
      await load();
      const { openModel } = await import('./gpt-open.js');
      return openModel({ newSession: () => new full.GptSession(), adopt, answer }, files, options);
    },
    // gpt.openMemory: where models are opened, the full module once it is loaded, else M.
    openMemory() {
      const O = full ?? M;
      const { left, max } = O.open_memory();
      return { left, max, size: O.HEAPU8.buffer.byteLength };
    },
  };
}

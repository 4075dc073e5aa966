// context.js — the one object the training page's sections share (main.js makes it, each
// section-*.js gets it): the learner's choices (state, config.js), what is not a choice (rt: the
// run, its curves, the views' data), the translator, the worker clients, and what several
// sections compute from them: the validation, the task's facts, the default prompts, the run's
// key, the permalink writer. It also names the sections (ctx.sections) so that one can ask
// another to refresh or act (a checkpoint's upload pauses the training, a reset clears the maps).
//
// Limits: browser only (location, history). It renders nothing; main.js's render() is ctx.render.
import { validate, runSpec, encodeHash, memorySpec, withMemory, variantSpec } from './config.js';
import { createI18n } from './i18n.js';
import { NEWLINE_MARK, toField, fromField } from './fields.js';

/** A run's own fields, as before its first step (a reset puts them back). */
export function newRun() {
  return {
    info: null, // the main run's info (config, train, vocab, step, …)
    runSpecKey: '', // the state the run was made from (to tell when the form has changed)
    series: { steps: [], train: [], valSteps: [], val: [], divergedAt: null, heads: [] }, // heads: [{step, induction, previous}] (head_scores_interval)
    step: 0, steps: 0, elapsed: 0, tps: 0, lastLoss: null, lastVal: null,
    divergence: '',
    samples: [],
    keepId: '', runState: null, elapsedBase: 0, // the kept run's record (section-runs.js), the state it was made from, its time before a reload
    opened: null, // an opened model's {name, format, notes} (section-open.js); null for a run made here
  };
}

/** Everything that is not the learner's choices: the run, its curves, the views' data. */
export function newRuntime() {
  return {
    tasks: [],
    status: 'loading', // loading | idle | starting | training | paused | done | diverged | error
    ...newRun(),
    message: null, // {kind: 'error' | 'info', text}
    errors: {}, // core errors by field, shown beside the field until it changes
    exp: null, // {kind, labels, runs: [series, series], status, sentence, steps}
    maps: null, mapsError: '',
    gen: { active: false, playing: false, error: '' },
    ckpt: { message: null },
    loadedFrom: '',
  };
}

/**
 * @param {object} o
 * @param {HTMLElement} o.app the page's root (#app): its data-* attributes tell the state
 * @param {object} o.state the learner's choices (config.js); its language's table already loaded (i18n.js loadStrings)
 * @param {object} o.worker the main run's worker client (client.js)
 * @param {() => object} o.startExpWorker starts the experiments' worker client (on first use)
 * @param {() => void} o.render renders the whole page again
 */
export function createContext({ app, state, worker, startExpWorker, render }) {
  let lastValid = { key: null, text: null, result: null };
  let memory = { key: null, answer: undefined }; // the worker's answer for the memorySpec `key`
  let hashTimer = 0;
  let expWorker = null;
  const ctx = {
    app,
    state,
    i18n: createI18n(state.lang),
    rt: newRuntime(),
    worker,
    render,
    /** The sections by name (main.js fills it): data, training, experiments, maps, next, surprisal, generation, checkpoints. */
    sections: {},
    /** The last hash the page wrote or read (a hashchange to it is the page's own). */
    lastHash: location.hash,
    t: (k, p) => ctx.i18n.t(k, p),
    /** The element with this id in the page's root (the document, or the shadow root of <gpt-lab>). */
    byId: (id) => (app.getRootNode?.().getElementById ? app.getRootNode() : document).getElementById(id),

    /** A new state (a link, a kept run): its language's translator with it (load its table first: i18n.js loadStrings). */
    setState(s) {
      ctx.state = s;
      ctx.i18n = createI18n(s.lang);
    },

    /** The experiments' worker client, started on first use. */
    expWorker() {
      expWorker ??= startExpWorker();
      return expWorker;
    },

    /**
     * validate(state) with the core's memory answer (withMemory), remembered while the fields, the
     * task and the text are the same: the page asks several times per keystroke, and a long text
     * costs a pass over it each time. The core is in the worker: settings with a new memorySpec
     * send one 'memory' request, and until it is answered the result is pending (not ok: Start
     * waits).
     */
    validated() {
      const s = ctx.state;
      const key = JSON.stringify([s.fields, s.task, s.mask, s.softmax, variantSpec(s)]);
      if (lastValid.key !== key || lastValid.text !== s.text) {
        const v = validate(s);
        const spec = memorySpec(s, v);
        const mkey = spec && JSON.stringify(spec);
        if (mkey && mkey !== memory.key) askMemory(spec, mkey);
        lastValid = { key, text: s.text, result: withMemory(v, spec, memory.answer) };
      }
      return lastValid.result;
    },

    /**
     * Which model a number comes from, for the page's sentences: {model, Model} (the second with a
     * capital, to start one). A run of this page (or a fine-tuned opened model) is "the model at
     * step N"; an opened model is named by where it came from (the core's source: "nanoGPT
     * ckpt.pt, iter 800"), never by the page's step 0.
     */
    modelLabel(step = ctx.rt.step) {
      const info = ctx.rt.info;
      const model = info?.source && !info.base ? ctx.t('model.opened', { source: info.source }) : ctx.t('model.step', { step });
      return { model, Model: model.charAt(0).toUpperCase() + model.slice(1) };
    },

    /** The sections on the page, by name (main.js, <gpt-lab>: its sections attribute); null: all. */
    shown: null,
    /** Whether a section is on the page (a lesson shows some): a sentence names only what is there. */
    onPage: (name) => !ctx.shown || ctx.shown.includes(name),

    /** The core's facts about a built-in task (example, alphabet, loss floor), or null. */
    taskInfo(name = ctx.state.task) {
      return ctx.rt.tasks.find((x) => x.name === name) ?? null;
    },

    /** The maps' prompt in the field's form: the learner's, else the task's default. */
    mapsPrompt: () => ctx.state.prompt || defaultPrompt(ctx),
    /** The generation's prompt in the field's form: the learner's, else the task's default. */
    genPrompt: () => ctx.state.gen_prompt || defaultGenPrompt(ctx),
    /** The next-token panel's prompt in the field's form: the learner's, else the generation's. */
    nextPrompt: () => ctx.state.next_prompt || ctx.genPrompt(),

    /** The samples during training: the generation's prompt, every N steps. */
    sampleSpec(values) {
      return { prompt: fromField(ctx.genPrompt()), every: values.sample_every };
    },

    /** The run the form describes, as a key ('invalid' when it describes none). */
    specKey() {
      const v = ctx.validated();
      if (!v.ok) return 'invalid';
      const spec = runSpec(ctx.state, v.values);
      return JSON.stringify({ ...spec, text: spec.text ? spec.text.length + spec.text.slice(0, 64) : undefined });
    },

    /** The form changed: its messages, the training section (the Start button, "changed"), the link. */
    formChanged() {
      ctx.sections.data.refresh();
      ctx.sections.training.refresh();
      ctx.sections.generation?.refresh(); // its sampling line, and the next-token panel's link to it
      ctx.writeHash();
    },

    /** Every section that depends on the run (cheap: each writes only what changed). */
    refreshRun() {
      for (const k of ['training', 'maps', 'walk', 'next', 'surprisal', 'generation', 'checkpoints', 'open', 'interp']) ctx.sections[k]?.refresh(); // <gpt-lab> has no walk section
    },

    /** Writes the state into the link (replaceState, at most one write per 150 ms of typing). */
    writeHash() {
      clearTimeout(hashTimer);
      hashTimer = setTimeout(() => {
        const h = encodeHash(ctx.state);
        if (h === location.hash || (!h && !location.hash)) return;
        ctx.lastHash = h;
        history.replaceState(history.state, '', h || `${location.pathname}${location.search}`);
      }, 150);
    },

    /** The page's link with the current state. */
    linkUrl: () => `${location.href.split('#')[0]}${encodeHash(ctx.state)}`,
  };
  /** Asks the worker for the core's memory figure of `spec`; its answer refreshes what depends on it. */
  function askMemory(spec, key) {
    const asked = { key, answer: undefined };
    memory = asked;
    worker.call('memory', { spec }).catch((e) => ({ error: { message: e.message, field: e.field } })).then((answer) => {
      if (memory !== asked) return; // the settings changed since: a newer request is out
      asked.answer = answer;
      lastValid.key = null; // validate again, with the answer
      ctx.sections.data.refresh();
      ctx.sections.training.refresh();
      ctx.sections.experiments.refresh();
    });
  }
  return ctx;
}

/**
 * The default prompts: the task's example (maps), and its example up to '=' (generation), each
 * after a newline: the tasks are lines, and a model finds where a line starts by its '\n' (without
 * one, a copy model has no start to copy from).
 */
function defaultPrompt(ctx) {
  const s = ctx.state;
  if (ctx.rt.opened) return openedPrompt(ctx.rt.info, 16);
  if (s.task === 'text') return toField([...s.text].slice(0, 16).join(''));
  const ex = ctx.taskInfo()?.example ?? '';
  return ex ? NEWLINE_MARK + ex : '';
}

function defaultGenPrompt(ctx) {
  const s = ctx.state;
  if (ctx.rt.opened) return openedPrompt(ctx.rt.info, 8);
  if (s.task === 'text') return toField([...s.text].slice(0, 8).join(''));
  const ex = ctx.taskInfo()?.example ?? '';
  const eq = ex.indexOf('=');
  return NEWLINE_MARK + (eq > 0 ? ex.slice(0, eq + 1) : ex.slice(0, Math.ceil(ex.length / 2)));
}

/**
 * An opened model's default prompt: with GPT-2's BPE or a Hugging Face tokenizer (byte-level or with
 * byte fallback: either spells any text), a line of Shakespeare; with characters, a line of Shakespeare spelled in its
 * vocabulary (its characters that the model has, else its first letters); with token ids (GPT-2's
 * tokens, no tokenizer yet), "Hello, world" in GPT-2's ids when the vocabulary is GPT-2's, else
 * its first ids.
 */
function openedPrompt(info, n) {
  if (info.tokenizer === 'gpt2-bpe' || info.tokenizer === 'hf-bpe') return toField('ROMEO: To be, or not to be'.slice(0, n)); // these BPEs spell any text
  if (info.tokenizer === 'token_ids') {
    const V = info.config.vocab_size;
    const ids = V >= 50257 ? [15496, 11, 995] : Array.from({ length: Math.min(4, V) }, (_, i) => i);
    return ids.map((i) => `[${i}]`).join('');
  }
  const vocab = new Set(info.vocab);
  const line = [...'ROMEO: To be, or not to be'].filter((c) => vocab.has(c)).slice(0, n);
  if (line.length >= Math.min(4, n)) return toField(line.join(''));
  return toField(info.vocab.filter((c) => c.trim()).slice(0, n).join(''));
}

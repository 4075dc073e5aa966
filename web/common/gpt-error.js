// gpt-error.js — GptError, the error of the tiny GPT's API (web/gpt.js), in a file of its own so
// that attention.js can export it without loading gpt.js: the stepper's page never fetches the
// GPT's wrapper or module (attention.js's loadGpt imports gpt.js when it is called).

/** Thrown for every input the core refuses: bad specs, bad text, bad checkpoints, limits. */
export class GptError extends Error {
  /**
   * @param {string} message the core's message, e.g. "invalid UTF-8 at byte 2 of the text …"
   * @param {{field?: string}} [where]
   */
  constructor(message, { field = '' } = {}) {
    super(message);
    this.name = 'GptError';
    /** What is at fault: a spec key ("n_head", "lr"), "text", "prompt", "checkpoint", a tensor's name, "run", or "". */
    this.field = field;
  }
}

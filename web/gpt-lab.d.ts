// gpt-lab.d.ts — types of web/gpt-lab.js: the <gpt-lab> element (the training lab on a course
// page), its attributes, properties, methods and events. Hand-written; keep it in step with
// gpt-lab.js and docs/embedding.md.

/** The run's status, as .status and the host's data-status attribute say it. */
export type GptLabStatus =
  | 'loading' | 'idle' | 'starting' | 'training' | 'paused' | 'done' | 'diverged' | 'error' | 'destroyed';

/** The training page's sections, in its order (the `sections` attribute names some of them, or "all"). */
export type GptLabSection =
  | 'data' | 'training' | 'experiments' | 'maps' | 'next' | 'surprisal' | 'generation' | 'checkpoints' | 'runs';

/**
 * The attributes a course page may set (all optional, all text). The run's are read as the
 * training page reads its link: a bad value is kept and shown beside its field, with its message.
 */
export interface GptLabAttributes {
  /** 'copy' | 'reverse' | 'sort' | 'induction' | 'sums' | 'grammar' | 'text' (default 'copy') */
  task?: string;
  /** the text to learn (task 'text', implied when text is given alone) */
  text?: string;
  'text-name'?: string;
  /** 'tiny' (2 layers, 4 heads, 64 wide, block 64; the default) | 'small' */
  preset?: string;
  'n-layer'?: string; 'n-head'?: string; 'n-embd'?: string; 'block-size'?: string;
  /** 1 … 20000 (default 2000) */
  steps?: string;
  /** an integer ≥ 0 (default 1337): same seed, same numbers */
  seed?: string;
  lr?: string; 'batch-size'?: string; 'eval-interval'?: string; 'sample-every'?: string;
  /** 'strict' (default) | 'inclusive' */
  mask?: string;
  /** 'stable' (default) | 'naive' */
  softmax?: string;
  /** the attention maps' prompt (default: the task's example) */
  prompt?: string;
  /** the generation's prompt */
  'gen-prompt'?: string;
  /** 'en' | 'zh' (default: the document's language if Chinese, else English) */
  lang?: string;
  /** space-separated GptLabSection names, or "all" (default "training maps generation") */
  sections?: string;
  /** present (and not "false"): train as soon as the core has loaded */
  autostart?: string;
  /** the map enlarged when the run ends: layer and head, from 1 (default 1, 1) */
  layer?: string;
  head?: string;
}

/** 'gpt-lab-ready': the core has loaded; the lab can train. */
export interface GptLabReadyDetail {
  /** the built-in tasks' names */
  tasks: string[];
}

/** 'gpt-lab-progress': after each chunk of steps the worker trained. */
export interface GptLabProgressDetail {
  /** steps trained so far */
  step: number;
  /** steps the run was asked for */
  steps: number;
  /** the last step's training loss (null if not finite) */
  loss: number | null;
  /** the last validation loss (null before the first evaluation) */
  val: number | null;
  tokensPerSec: number;
  /** seconds of training so far */
  elapsed: number;
}

/** 'gpt-lab-done': the run trained all its steps (step === steps). */
export interface GptLabDoneDetail {
  step: number;
  steps: number;
  loss: number | null;
  val: number | null;
}

/** 'gpt-lab-diverged': the loss stopped being finite; the run stopped there. */
export interface GptLabDivergedDetail {
  /** the step whose loss was not finite */
  step: number;
  steps: number;
  loss: number | null;
  /** the core's words (which tensor, which step) */
  message: string;
}

/** 'gpt-lab-maps': the attention maps are shown, with this head enlarged. */
export interface GptLabMapsDetail {
  /** from 1 */
  layer: number;
  /** from 1 */
  head: number;
  /** the step of the model they were computed with */
  step: number;
  prompt: string;
}

/** 'gpt-lab-error': the core did not load, a setting was refused (fields names it), or the worker stopped. */
export interface GptLabErrorDetail {
  message: string;
  /** the settings at fault ('steps', 'n_head', 'text', …), empty when none is */
  fields: string[];
}

export interface GptLabEventMap {
  'gpt-lab-ready': CustomEvent<GptLabReadyDetail>;
  'gpt-lab-progress': CustomEvent<GptLabProgressDetail>;
  'gpt-lab-done': CustomEvent<GptLabDoneDetail>;
  'gpt-lab-diverged': CustomEvent<GptLabDivergedDetail>;
  'gpt-lab-maps': CustomEvent<GptLabMapsDetail>;
  'gpt-lab-error': CustomEvent<GptLabErrorDetail>;
}

export class GptLabElement extends HTMLElement {
  /** Resolves with the element once the core has loaded; rejects if it failed or the element was destroyed. */
  readonly ready: Promise<GptLabElement>;
  readonly status: GptLabStatus;
  /** The training page's link with this lab's settings (its Start page, with the same run). */
  readonly link: string;
  /** Starts (or restarts) a run from the settings; resolves once the worker has it, or once it was refused ('gpt-lab-error'). */
  start(): Promise<void>;
  /** Pauses the run. */
  pause(): Promise<void>;
  /** Terminates the element's workers and empties it, for good (removing it from the page does the same). */
  destroy(): void;
  addEventListener<K extends keyof GptLabEventMap>(type: K, listener: (this: GptLabElement, ev: GptLabEventMap[K]) => unknown, options?: boolean | AddEventListenerOptions): void;
  addEventListener(type: string, listener: EventListenerOrEventListenerObject, options?: boolean | AddEventListenerOptions): void;
  removeEventListener<K extends keyof GptLabEventMap>(type: K, listener: (this: GptLabElement, ev: GptLabEventMap[K]) => unknown, options?: boolean | EventListenerOptions): void;
  removeEventListener(type: string, listener: EventListenerOrEventListenerObject, options?: boolean | EventListenerOptions): void;
}

/** The run's attribute names, each with its key in the training page's link. */
export const RUN_ATTRS: Record<string, string>;
/** The sections a lesson may show, by name, in the page's order. */
export const SECTIONS: GptLabSection[];
/** 'training', 'maps', 'generation' */
export const DEFAULT_SECTIONS: GptLabSection[];
/** The stylesheets the element links into its shadow root. */
export const STYLESHEETS: string[];
/** The training page's address (next to this file). */
export const TRAIN_PAGE_URL: string;
/** The training page's state for run parameters (attributes or an iframe's hash). */
export function labState(params: Record<string, string>, fallbackLang?: 'en' | 'zh'): object;
/** "training maps" → the names, in the page's order (unknown ones warned of and left out). */
export function parseSections(text: string | null): GptLabSection[];

declare global {
  interface HTMLElementTagNameMap {
    'gpt-lab': GptLabElement;
  }
  interface HTMLElementEventMap extends GptLabEventMap {}
}

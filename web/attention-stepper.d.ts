// attention-stepper.d.ts — types of web/attention-stepper.js: the <attention-stepper> element, its
// properties and its events. Importing the module defines the element (a side effect); the
// attributes and the JSON child are listed at the top of attention-stepper.js and in
// docs/embedding.md. The state is the stepper's plain-JSON state (web/common/state.js), typed here
// loosely as a record: it is versioned ("version": 1) and validated when set.

import type { Attention, Trace } from './attention.js';
import type { ExerciseResult } from './embed-results.js';

/** The stepper's state: plain JSON (version, preset, mode, matrices, options, exercise, …). */
export type StepperState = { version: 1; [key: string]: unknown };

/** One asked cell of an exercise, as the 'stepper-exercise' event reports it. */
export interface ExerciseCell {
  panel: string;
  row: number;
  col: number;
  answer: string;
  status: 'right' | 'wrong' | 'empty' | 'invalid';
  correct: boolean;
  expected: number;
  value?: number;
}

/** The learner's result at each check, reveal or reset ('stepper-exercise'): the counts an iframe
 *  posts (embed-results.d.ts), with the cells, the tolerance and the expected values. */
export interface ExerciseDetail extends Omit<ExerciseResult, 'id' | 'reset' | 'score'> {
  id: string;
  /** a ready-made exercise of the tutorials */
  ready: boolean;
  reset?: boolean;
  tol: { decimals?: number; rel?: number; abs?: number };
  cells: ExerciseCell[];
}

/** What .controller and .ready give: the mounted stepper (the contract of web/stepper/stepper.js). */
export interface StepperController {
  /** a deep copy of the current state */
  getState(): StepperState;
  /** replaces the state (validated) and re-renders; emits no 'change' */
  setState(state: StepperState): void;
  /** listens; returns the function that stops listening */
  on(event: 'change', fn: (state: StepperState) => void): () => void;
  on(event: 'trace', fn: (trace: Trace) => void): () => void;
  on(event: 'exercise', fn: (result: ExerciseDetail) => void): () => void;
  /** true while an exercise is being worked on */
  exerciseOpen(): boolean;
  /** removes the DOM and every listener */
  destroy(): void;
}

export class AttentionStepperElement extends HTMLElement {
  /** the mounted stepper, null until it is ready */
  readonly controller: StepperController | null;
  /** resolves with the controller once the stepper is mounted */
  readonly ready: Promise<StepperController>;
  /** the current state (null before ready); setting it waits for ready */
  state: StepperState | null;
  /** the playground's URL (index.html beside this module) with the current state in its hash */
  readonly permalink: string;
}

/** The stylesheets the element needs, next to the module (URLs). */
export const STYLESHEETS: string[];
/** The playground page a "copy link" points to (index.html beside the module). */
export const PLAYGROUND_URL: string;
/** The page's one wasm instance, loaded on first use and shared by every element. */
export function sharedAttention(): Promise<Attention>;

declare global {
  interface HTMLElementTagNameMap {
    'attention-stepper': AttentionStepperElement;
  }
  interface HTMLElementEventMap {
    'stepper-ready': CustomEvent<StepperController>;
    'stepper-change': CustomEvent<StepperState>;
    'stepper-trace': CustomEvent<Trace>;
    'stepper-exercise': CustomEvent<ExerciseDetail>;
    'stepper-error': CustomEvent<Error>;
  }
}

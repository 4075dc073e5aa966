// embed-results.d.ts — types of web/embed-results.js, for a course page that takes the learner's
// results from stepper iframes (embed.html#…&report-to=<the course's origin>), and the training
// lab's run from lab iframes (lab-embed.html#…&report-to=<the course's origin>).

/** A learner's result as an iframe posts it (never the cells, the answers or the expected values). */
export interface ExerciseResult {
  /** the exercise's id; null when the frame shows no exercise */
  id: string | null;
  /** cells asked */
  total: number;
  right: number;
  /** wrong or not a number */
  wrong: number;
  /** not answered (or not checked yet) */
  empty: number;
  /** every asked cell right */
  solved: boolean;
  /** the learner pressed "Show the answers" */
  revealed: boolean;
  /** the learner pressed "Reset" */
  reset: boolean;
  /** right / total, 0 … 1 */
  score: number;
}

/** 'attention-stepper:exercise' */
export const RESULT_TYPE: string;
/** 'attention-stepper:request-result' */
export const REQUEST_RESULT_TYPE: string;

/** A message's result, each field checked and copied; null if the data is not one. */
export function readResult(data: unknown): ExerciseResult | null;

/**
 * Calls `callback` for each result an iframe of this page posts from `origin` (the stepper's
 * site); also dispatches 'attention-stepper-result' (detail: the result) on that iframe.
 * @returns a function that stops listening
 */
export function onExerciseResult(
  origin: string | string[],
  callback: (result: ExerciseResult, frame: HTMLIFrameElement) => void,
): () => void;

/** Asks a stepper iframe for its current result (the answer comes through onExerciseResult). */
export function requestExerciseResult(frame: HTMLIFrameElement, origin: string): void;

/** A lab iframe's report of its run (the run's figures only; never the model or the text). */
export interface LabMessage {
  /** what happened: a chunk of steps, the run's end, its divergence, or the answer to requestLabStatus */
  type: 'progress' | 'done' | 'diverged' | 'status';
  /** the run's status then (as <gpt-lab>'s .status); null if the frame sent none */
  status: 'loading' | 'idle' | 'starting' | 'training' | 'paused' | 'done' | 'diverged' | 'error' | 'destroyed' | null;
  /** steps trained (for 'diverged': the step where the loss stopped being finite) */
  step: number;
  /** steps the run was asked for */
  steps: number;
  /** the last training loss (null before any step, or not finite) */
  loss: number | null;
  /** the last validation loss (null before any evaluation) */
  val: number | null;
  /** for 'diverged' (and an 'error' status): the core's words; '' otherwise */
  message: string;
}

/** 'gpt-lab:' */
export const LAB_PREFIX: string;
/** 'gpt-lab:request-status' */
export const REQUEST_LAB_STATUS_TYPE: string;

/** A lab frame's message, each field checked and copied; null if the data is not one. */
export function readLabMessage(data: unknown): LabMessage | null;

/**
 * Calls `callback` for each report a lab iframe of this page posts from `origin`; also dispatches
 * 'gpt-lab-message' (detail: the message) on that iframe.
 * @returns a function that stops listening
 */
export function onLabMessage(
  origin: string | string[],
  callback: (message: LabMessage, frame: HTMLIFrameElement) => void,
): () => void;

/** Asks a lab iframe for its run's status (the answer comes through onLabMessage as type 'status'). */
export function requestLabStatus(frame: HTMLIFrameElement, origin: string): void;

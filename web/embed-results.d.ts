// embed-results.d.ts — types of web/embed-results.js, for a course page that takes the learner's
// results from stepper iframes (embed.html#…&report-to=<the course's origin>).

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

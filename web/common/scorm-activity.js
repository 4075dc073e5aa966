// scorm-activity.js — a SCORM activity: what the package shows, read the same way by the packager
// (scripts/scorm.mjs, in Node) and by the player (player.js, in the LMS). No DOM, no wasm.
//
//   { title: 'Softmax by hand', lang: 'en' | 'zh',
//     exercises: ['exercise=identity-softmax',                       // embed.html's parameters
//                 'preset=causal-4&exercise=row3&ask=weights[3,*]',
//                 'https://…/index.html#s=1.eyJ2…'] }                  // or a permalink (Copy link)
//
// Each exercise is what embed.html's hash takes (the part after '#', a whole URL is fine). One
// exercise or several: they are one activity, one score. Each must name an exercise (a ready-made
// id, or an id of your own with `ask`), and no two the same id (their answers are kept by id).
import { decodeState } from './permalink.js';
import { validateState } from './state.js';
import { EXERCISES } from './exercise.js';

/** At most this many exercises in one activity (their answers share 4096 characters). */
export const MAX_EXERCISES = 20;

/** An exercise's text → the hash part ('exercise=…' or 's=1.…'), without '#'. */
export function specText(text) {
  const s = String(text ?? '').trim();
  const hash = s.includes('#') ? s.slice(s.indexOf('#') + 1) : s;
  return hash.replace(/^[?&]/, '');
}

/** The id of the exercise a spec names, or null if it names none. */
export function exerciseId(spec) {
  const state = decodeState('#' + spec, { validate: validateState });
  if (state) return state.exercise?.id ?? null;
  const p = new URLSearchParams(spec);
  const id = p.get('exercise');
  if (!id || !/^[\w.-]{1,64}$/.test(id)) return null;
  return Object.hasOwn(EXERCISES, id) || p.get('ask') ? id : null;
}

/**
 * Anything → a clean activity and the problems found (each a short English sentence naming the
 * exercise at fault). Exercises that name none, and repeats of an id, are left out.
 * @returns {{title: string, lang: 'en'|'zh', exercises: {spec: string, id: string}[], problems: string[]}}
 */
export function readActivity(obj) {
  const o = obj && typeof obj === 'object' && !Array.isArray(obj) ? obj : {};
  const title = typeof o.title === 'string' && o.title.trim() ? o.title.trim().slice(0, 200) : 'Attention exercises';
  const lang = o.lang === 'zh' ? 'zh' : 'en';
  const problems = [];
  const exercises = [];
  const list = Array.isArray(o.exercises) ? o.exercises : [];
  if (!Array.isArray(o.exercises)) problems.push('"exercises" must be a list of exercises');
  list.slice(0, MAX_EXERCISES).forEach((text, i) => {
    const spec = specText(text);
    const id = exerciseId(spec);
    if (!id) problems.push(`exercise ${i + 1} ("${spec.slice(0, 80)}") names no exercise: give exercise=<a ready-made id>, or exercise=<your id>&ask=…, or a permalink of one`);
    else if (exercises.some((e) => e.id === id)) problems.push(`exercise ${i + 1} repeats the id "${id}": give each its own`);
    else exercises.push({ spec, id });
  });
  if (list.length > MAX_EXERCISES) problems.push(`${list.length} exercises: at most ${MAX_EXERCISES} in one activity`);
  return { title, lang, exercises, problems };
}

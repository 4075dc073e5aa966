// scorm-download.js — the SCORM package built in the browser, for the stepper's author mode ("Download
// as a SCORM package"): the same package as `npm run scorm` (scorm-package.js), its files fetched from
// the site the stepper is served from (this file's folder's parent), deflated with the browser's
// CompressionStream where there is one (stored otherwise), zipped and downloaded.
// Loaded on demand (import()) by the exercise bar: the stepper does not carry it otherwise.
import { readActivity } from './scorm-activity.js';
import { buildPackage, packageName } from './scorm-package.js';
import { zip } from './zip.js';
import { downloadBlob } from './ui.js';

const SITE = new URL('../', import.meta.url);

async function fetched(path, how) {
  const res = await fetch(new URL(path, SITE));
  if (!res.ok) throw new Error(`${path}: HTTP ${res.status}`);
  return how === 'text' ? res.text() : new Uint8Array(await res.arrayBuffer());
}
const site = { readText: (p) => fetched(p, 'text'), readBytes: (p) => fetched(p, 'bytes') };

/** A raw-deflate function for zip() over bodies compressed ahead (the browser's is async). */
async function deflater(files) {
  if (typeof CompressionStream !== 'function') return undefined;
  const out = new Map();
  for (const { data } of files) {
    const stream = new Blob([data]).stream().pipeThrough(new CompressionStream('deflate-raw'));
    out.set(data, new Uint8Array(await new Response(stream).arrayBuffer()));
  }
  return (data) => out.get(data) ?? data;
}

/**
 * Builds and downloads the package of an activity ({title, lang, exercises: [spec, …]}).
 * @returns {Promise<{name: string, size: number}>} the file's name and size in bytes
 */
export async function downloadScorm(input) {
  const activity = readActivity(input);
  if (activity.problems.length) throw new Error(activity.problems.join('; '));
  const files = await buildPackage(activity, site);
  const bytes = zip(files, { deflateRaw: await deflater(files) });
  const name = packageName(activity.title);
  downloadBlob(name, new Blob([bytes], { type: 'application/zip' }));
  return { name, size: bytes.length };
}

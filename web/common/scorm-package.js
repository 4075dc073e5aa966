// scorm-package.js — a SCORM 1.2 package of an activity (scorm-activity.js): the files the player needs,
// found by following the imports from scorm/player.html (so the package holds the page, the
// stepper, the core and its wasm, and nothing else of the site), the player page with the
// activity written into it, and imsmanifest.xml (one organization, one item, one SCO resource
// listing every file). The caller reads the site's files and zips the result (zip.js):
// scripts/scorm.mjs in Node, scorm-download.js in the browser.
//
// Limits: the manifest names the SCORM 1.2 namespaces but the package does not carry the ADL/IMS
// schema files (.xsd), which LMSs do not need; an ADL conformance suite that asks for them will.
// Only relative references in code (not in comments) are followed: imports, import('…'), new URL('…', import.meta.url) and
// the page's src/href; links to .html pages (the full playground) are not packed.

/** The player page inside the package (the SCO's launch file). */
export const LAUNCH = 'scorm/player.html';

const JS_REFS = [
  /\bfrom\s*(['"])(\.{1,2}\/[^'"]+)\1/g,                          // import … from './x.js'
  /\bimport\s*(['"])(\.{1,2}\/[^'"]+)\1/g,                        // import './x.js'
  /\bimport\(\s*(['"])(\.{1,2}\/[^'"]+)\1\s*\)/g,                 // import('./x.js')
  /\bnew URL\(\s*(['"])([^'":]+)\1\s*,\s*import\.meta\.url\s*\)/g, // new URL('x.wasm', import.meta.url)
];
const HTML_REFS = [/\b(?:src|href)=(["'])([^"':#?]+)\1/g];  // <script src>, <link href>

// The text without its comments (line and block comments, HTML comments): examples in comments
// are not references.
function code(text, html) {
  if (html) return text.replace(/<!--[\s\S]*?-->/g, '');
  // a // comment: at a line's start or after a space, and followed by one (not a URL's '://')
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|\s)\/\/(\s.*)?$/gm, '$1');
}

/** The relative references in a file's text (paths as written); `html`: a page's src/href. */
export function references(text, html = false) {
  const out = new Set();
  for (const re of html ? HTML_REFS : JS_REFS) for (const m of code(text, html).matchAll(re)) out.add(m[2]);
  return [...out];
}

/** 'stepper/x.js' + './ui.js' → 'ui.js' (null when it leaves the site's folder). */
export function resolve(from, ref) {
  const base = new URL(from, 'http://site/');
  const u = new URL(ref, base);
  if (u.origin !== 'http://site') return null;
  return decodeURIComponent(u.pathname.slice(1));
}

/** Files the walk finds but the player never loads: attention.js's loadGpt imports gpt.js lazily
 *  (and it the GPT's core, 700 kB); the stepper never calls it. */
const NOT_PACKED = new Set(['gpt.js']);

const followed = (path) => /\.(m?js|html)$/.test(path);

/**
 * Every file the player needs, from its page: [path, …] in a stable order. The same walk serves
 * scripts/pack.mjs (the npm package and zip): other `entries` (pages, modules, any file) and
 * another `skip` set (files the walk finds but does not take).
 * @param {(path: string) => Promise<string>} readText the site's file as text (for .html/.js/.mjs/.css)
 * @param {{entries?: string[], skip?: Set<string>}} [options] default: the player page, without gpt.js
 */
export async function collectFiles(readText, { entries = [LAUNCH], skip = NOT_PACKED } = {}) {
  const seen = new Set(entries);
  const queue = [...entries];
  while (queue.length) {
    const path = queue.shift();
    if (!followed(path)) continue;
    const text = await readText(path);
    for (const ref of references(text, path.endsWith('.html'))) {
      const target = resolve(path, ref);
      if (!target || /\.html$/.test(target) || skip.has(target) || seen.has(target)) continue;
      seen.add(target);
      queue.push(target);
    }
  }
  return [...seen].sort();
}

const xml = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** A stable identifier (an XML NCName) for an activity: from its title and exercises. */
export function identifier(activity) {
  const text = JSON.stringify([activity.title, activity.exercises.map((e) => e.spec)]);
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) { h ^= text.charCodeAt(i); h = Math.imul(h, 0x01000193) >>> 0; }
  const slug = activity.title.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 40);
  return `attention-${slug ? slug + '-' : ''}${h.toString(16).padStart(8, '0')}`;
}

/** The package's file name for a title: 'Softmax by hand' → 'Softmax-by-hand.zip'. */
export function packageName(title) {
  return `${String(title).replace(/[^\w\u4e00-\u9fff-]+/g, '-').replace(/^-+|-+$/g, '') || 'attention'}.zip`;
}

/** imsmanifest.xml for an activity whose package holds `files` (without the manifest). */
export function manifest(activity, files) {
  const id = identifier(activity);
  const fileList = files.map((f) => `      <file href="${xml(f)}"/>`).join('\n');
  return `<?xml version="1.0" encoding="UTF-8"?>
<manifest identifier="${id}" version="1.0"
          xmlns="http://www.imsproject.org/xsd/imscp_rootv1p1p2"
          xmlns:adlcp="http://www.adlnet.org/xsd/adlcp_rootv1p2">
  <metadata>
    <schema>ADL SCORM</schema>
    <schemaversion>1.2</schemaversion>
  </metadata>
  <organizations default="ORG-${id}">
    <organization identifier="ORG-${id}">
      <title>${xml(activity.title)}</title>
      <item identifier="ITEM-${id}" identifierref="SCO-${id}" isvisible="true">
        <title>${xml(activity.title)}</title>
      </item>
    </organization>
  </organizations>
  <resources>
    <resource identifier="SCO-${id}" type="webcontent" adlcp:scormtype="sco" href="${LAUNCH}">
${fileList}
    </resource>
  </resources>
</manifest>
`;
}

/** The player page with the activity in its data block (as JSON; '<' escaped so it cannot end the block). */
export function playerPage(template, activity) {
  const data = JSON.stringify({ title: activity.title, lang: activity.lang, exercises: activity.exercises.map((e) => e.spec) })
    .replace(/</g, '\\u003c');
  const re = /(<script type="application\/json" id="activity">)[\s\S]*?(<\/script>)/;
  if (!re.test(template)) throw new Error(`${LAUNCH} has no <script type="application/json" id="activity"> block`);
  return template.replace(re, (_, open, close) => open + data + close)
    .replace(/<title>[^<]*<\/title>/, `<title>${xml(activity.title)}</title>`);
}

/**
 * The package's files: [{path, data: Uint8Array}], imsmanifest.xml first.
 * @param {object} activity readActivity's result, with at least one exercise
 * @param {{readText(p: string): Promise<string>, readBytes(p: string): Promise<Uint8Array>}} site
 */
export async function buildPackage(activity, site) {
  if (!activity.exercises.length) throw new Error('the activity has no exercise');
  const paths = await collectFiles(site.readText);
  const enc = new TextEncoder();
  const files = [];
  for (const path of paths) {
    const data = path === LAUNCH ? enc.encode(playerPage(await site.readText(path), activity)) : await site.readBytes(path);
    files.push({ path, data });
  }
  return [{ path: 'imsmanifest.xml', data: enc.encode(manifest(activity, paths)) }, ...files];
}

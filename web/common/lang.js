// lang.js — the language machinery the pages share (each page's own strings stay in its i18n.js):
// the language remembered across pages (one localStorage key), and a translator over a page's
// string tables. t(key, params) replaces {name} placeholders and a tiny select,
// {n, select, 1 {…} other {…}} ("of head h" only when there are several heads); a key missing in
// the language falls back to English, then to the key itself.
// Limits: two languages, 'en' and 'zh'; without localStorage (private mode) nothing is remembered.

export const LANG_KEY = 'attention-playground.lang';

function format(s, params) {
  s = s.replace(/\{(\w+), select, 1 \{([^{}]*)\} other \{((?:[^{}]|\{\w+\})*)\}\}/g,
    (_, k, one, other) => (params && Number(params[k]) === 1 ? one : other));
  return s.replace(/\{(\w+)\}/g, (m, k) => (params && params[k] !== undefined ? String(params[k]) : m));
}

/** A translator over `strings` ({ en, zh }) for `lang`: { lang, t(key, params), has(key) }. */
export function translator(strings, lang) {
  const en = strings.en;
  const table = strings[lang] ?? en;
  return {
    lang,
    t(key, params) {
      const s = table[key] ?? en[key];
      return s === undefined ? key : format(s, params);
    },
    has: (key) => key in table,
  };
}

/** The remembered language, or null. */
export function storedLang() {
  try {
    const v = localStorage.getItem(LANG_KEY);
    return v === 'en' || v === 'zh' ? v : null;
  } catch { return null; }
}

export function storeLang(lang) {
  try { localStorage.setItem(LANG_KEY, lang); } catch { /* private mode: not remembered */ }
}

// split_patterns.cpp — the tokenizer.json pre-tokenizer patterns, matched by hand (see split_patterns.h).
#include "core/tokenizers/split_patterns.h"

#include "core/tokenizers/bpe.h"
#include "core/tokenizers/unicode_classes.h"

namespace ap {

namespace {

const std::string kLlama3 =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
    "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const std::string kQwen2 =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
    "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const std::string kGpt2 = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

bool is_crlf(const Unit& u) { return u.cp == U'\r' || u.cp == U'\n'; }

// (?i:'s|'t|'re|'ve|'m|'ll|'d) at unit i: the units matched, or 0.
size_t contraction_i(const std::vector<Unit>& u, size_t i) {
  auto is = [&](size_t k, char32_t lower) {
    if (k >= u.size()) return false;
    const char32_t c = u[k].cp;
    return c == lower || c == lower - 32 || (lower == U's' && c == 0x017F);
  };
  if (i >= u.size() || u[i].cp != U'\'') return 0;
  if (is(i + 1, U's') || is(i + 1, U't')) return 2;
  if ((is(i + 1, U'r') || is(i + 1, U'v')) && is(i + 2, U'e')) return 3;
  if (is(i + 1, U'm')) return 2;
  if (is(i + 1, U'l') && is(i + 2, U'l')) return 3;
  if (is(i + 1, U'd')) return 2;
  return 0;
}

// One match of the llama3/qwen2 pattern at unit i (the alternatives in order): its end.
size_t match_llama3(const std::vector<Unit>& u, size_t i, size_t max_digits) {
  const size_t n = u.size();
  auto run = [&](size_t k, Cls c) {
    while (k < n && u[k].cls == c) ++k;
    return k;
  };
  if (const size_t c = contraction_i(u, i)) return i + c;
  // [^\r\n\p{L}\p{N}]?\p{L}+
  if (u[i].cls == Cls::letter) return run(i, Cls::letter);
  if (u[i].cls != Cls::number && !is_crlf(u[i]) && i + 1 < n && u[i + 1].cls == Cls::letter)
    return run(i + 1, Cls::letter);
  // \p{N}{1,max}
  if (u[i].cls == Cls::number) {
    size_t k = i;
    while (k < n && k - i < max_digits && u[k].cls == Cls::number) ++k;
    return k;
  }
  // ' ?[^\s\p{L}\p{N}]+[\r\n]*'
  const size_t o = (u[i].cp == U' ' && i + 1 < n && u[i + 1].cls == Cls::other) ? i + 1 : i;
  if (u[o].cls == Cls::other) {
    size_t k = run(o, Cls::other);
    while (k < n && is_crlf(u[k])) ++k;
    return k;
  }
  // u[i] is white space from here on.
  const size_t j = run(i, Cls::space);
  // \s*[\r\n]+ : the run up to its last CR or LF
  for (size_t k = j; k > i; --k)
    if (is_crlf(u[k - 1])) return k;
  // \s+(?!\S) then \s+
  if (j == n || j - i == 1) return j;
  return j - 1;
}

}  // namespace

bool split_pattern_of(const std::string& regex, SplitPattern& out) {
  for (SplitPattern p : {SplitPattern::gpt2, SplitPattern::llama3, SplitPattern::qwen2})
    if (regex == split_pattern_text(p)) {
      out = p;
      return true;
    }
  return false;
}

const char* split_pattern_name(SplitPattern p) {
  switch (p) {
    case SplitPattern::gpt2: return "gpt2";
    case SplitPattern::llama3: return "llama3";
    case SplitPattern::qwen2: return "qwen2";
  }
  return "?";
}

const std::string& split_pattern_text(SplitPattern p) {
  return p == SplitPattern::gpt2 ? kGpt2 : p == SplitPattern::llama3 ? kLlama3 : kQwen2;
}

void split_with(SplitPattern p, const std::string& text, size_t at, size_t len,
                std::vector<std::pair<size_t, size_t>>& out) {
  if (p == SplitPattern::gpt2) {
    for (const auto& [o, l] : bpe_pretokenize(text.substr(at, len))) out.emplace_back(at + o, l);
    return;
  }
  const size_t max_digits = p == SplitPattern::llama3 ? 3 : 1;
  const std::vector<Unit> u = units_of(text, at, len);
  for (size_t i = 0; i < u.size();) {
    const size_t end = match_llama3(u, i, max_digits);
    out.emplace_back(u[i].at, (end < u.size() ? u[end].at : at + len) - u[i].at);
    i = end;
  }
}

void split_digits(const std::string& text, size_t at, size_t len, std::vector<std::pair<size_t, size_t>>& out) {
  const std::vector<Unit> u = units_of(text, at, len);
  size_t start = at;
  for (const Unit& x : u) {
    if (x.cls != Cls::number) continue;
    if (x.at > start) out.emplace_back(start, x.at - start);
    out.emplace_back(x.at, x.len);
    start = x.at + x.len;
  }
  if (at + len > start) out.emplace_back(start, at + len - start);
}

}  // namespace ap

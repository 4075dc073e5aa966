// gguf_tokenizer.cpp — a GGUF file's tokenizer as an HfBpeTokenizer (see gguf_tokenizer.h).
#include "formats/gguf_tokenizer.h"

#include <algorithm>
#include <cmath>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "core/base/input_error.h"

namespace ap {

const char* const kGgufPreTokenizers = "llama-bpe, llama3, llama-v3, qwen2, deepseek-r1-qwen, smollm, gpt-2";

namespace {

// llama.cpp's token types (llama_token_type).
constexpr int kNormal = 1, kUnknown = 2, kControl = 3, kUserDefined = 4;

[[noreturn]] void refuse(const std::string& what, const std::string& key, const std::string& msg) {
  throw InputError(what + ": " + key + " " + msg, key);
}

bool is_byte_token(const std::string& s) {
  auto hex = [](char c) { return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'F'); };
  return s.size() == 6 && s.compare(0, 3, "<0x") == 0 && hex(s[3]) && hex(s[4]) && s[5] == '>';
}

// The byte offsets where s's UTF-8 characters start (a stray continuation byte goes with the one before).
std::vector<size_t> char_starts(const std::string& s) {
  std::vector<size_t> at;
  for (size_t i = 0; i < s.size(); ++i)
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80 || at.empty()) at.push_back(i);
  return at;
}

void set_pre(const std::string& what, const std::string& pre, HfBpeSpec& spec) {
  if (pre == "llama-bpe" || pre == "llama3" || pre == "llama-v3") {
    spec.pre.push_back({HfPreStep::Kind::split, SplitPattern::llama3});
    spec.ignore_merges = true;
  } else if (pre == "qwen2" || pre == "deepseek-r1-qwen") {
    spec.pre.push_back({HfPreStep::Kind::split, SplitPattern::qwen2});
    spec.nfc = true;
  } else if (pre == "smollm") {
    spec.pre.push_back({HfPreStep::Kind::digits, SplitPattern::gpt2});
    spec.pre.push_back({HfPreStep::Kind::byte_level_regex, SplitPattern::gpt2});
  } else if (pre == "gpt-2") {
    spec.pre.push_back({HfPreStep::Kind::byte_level_regex, SplitPattern::gpt2});
  } else {
    refuse(what, "tokenizer.ggml.pre",
           (pre.empty() ? std::string("is missing (llama.cpp's \"default\" split)") : "is '" + pre + "'") +
               ", not a split we run (" + kGgufPreTokenizers + ")");
  }
}

// SentencePiece's merges from its scores, as transformers' SentencePieceExtractor makes them.
void spm_merges(const std::string& what, const gguf::TokenizerData& t, HfBpeSpec& spec) {
  if (t.scores.empty()) refuse(what, "tokenizer.ggml.scores", "is missing: a SentencePiece vocabulary merges by its scores");
  std::unordered_map<std::string, int> id_of;
  for (size_t i = 0; i < t.tokens.size(); ++i) id_of.emplace(t.tokens[i], static_cast<int>(i));
  struct M {
    float score;
    int token, left, right;
  };
  std::vector<M> ms;
  for (size_t i = 0; i < t.tokens.size(); ++i) {
    const std::string& tok = t.tokens[i];
    const int type = t.token_type.empty() ? 0 : t.token_type[i];
    if (t.token_type.empty() ? (is_byte_token(tok) || static_cast<int64_t>(i) == t.unk_id ||
                                static_cast<int64_t>(i) == t.bos_id || static_cast<int64_t>(i) == t.eos_id)
                             : type != kNormal)
      continue;
    if (!std::isfinite(t.scores[i]))
      refuse(what, "tokenizer.ggml.scores", "holds " + std::to_string(t.scores[i]) + " for token " + std::to_string(i) + ", not a finite score");
    const std::vector<size_t> at = char_starts(tok);
    const size_t before = ms.size();
    for (size_t k = 1; k < at.size(); ++k) {
      const auto l = id_of.find(tok.substr(0, at[k])), r = id_of.find(tok.substr(at[k]));
      if (l != id_of.end() && r != id_of.end()) ms.push_back({t.scores[i], static_cast<int>(i), l->second, r->second});
    }
    std::sort(ms.begin() + static_cast<long>(before), ms.end(),
              [](const M& a, const M& b) { return std::tie(a.left, a.right) < std::tie(b.left, b.right); });
  }
  std::stable_sort(ms.begin(), ms.end(), [](const M& a, const M& b) { return a.score > b.score; });
  spec.merges.reserve(ms.size());
  for (size_t r = 0; r < ms.size(); ++r)
    spec.merges.push_back({t.tokens[static_cast<size_t>(ms[r].left)], t.tokens[static_cast<size_t>(ms[r].right)], r});
  spec.merges_name = "tokenizer.ggml.scores' merges";
}

}  // namespace

HfTokenizerFiles load_gguf_tokenizer(const gguf::File& f, const std::string& what) {
  const gguf::TokenizerData t = gguf::read_tokenizer(f, what);
  HfBpeSpec spec;
  spec.vocab = t.tokens;
  spec.vocab_name = "tokenizer.ggml.tokens";
  for (size_t i = 0; i < t.token_type.size(); ++i) {
    const int type = t.token_type[i];
    if (type == kControl || type == kUnknown || type == kUserDefined)
      spec.added.push_back({t.tokens[i], static_cast<int>(i), type != kUserDefined});
  }
  if (t.model == "gpt2") {
    spec.model = HfBpeSpec::Model::byte_level;
    set_pre(what, t.pre, spec);
    spec.merges.reserve(t.merges.size());
    for (size_t i = 0; i < t.merges.size(); ++i) {
      const std::string& m = t.merges[i];
      const size_t sp = m.find(' ');
      if (sp == std::string::npos || sp == 0 || sp + 1 == m.size() || m.find(' ', sp + 1) != std::string::npos)
        refuse(what, "tokenizer.ggml.merges", "[" + std::to_string(i) + "] is \"" + m.substr(0, 60) + "\", not two tokens and a space");
      spec.merges.push_back({m.substr(0, sp), m.substr(sp + 1), i});
    }
    spec.merges_name = "tokenizer.ggml.merges";
  } else {  // "llama" (read_tokenizer refuses others)
    spec.model = HfBpeSpec::Model::sentencepiece;
    if (!t.merges.empty()) refuse(what, "tokenizer.ggml.merges", "is in a SentencePiece (llama) vocabulary, which merges by its scores");
    spm_merges(what, t, spec);
    std::unordered_map<std::string, bool> bytes;  // the <0xNN> tokens there are
    for (const std::string& tok : t.tokens)
      if (is_byte_token(tok)) bytes[tok] = true;
    spec.byte_fallback = bytes.size() == 256;
    spec.fuse_unk = true;
    spec.unk_id = static_cast<int>(t.unk_id);
    if (spec.unk_id < 0)
      for (size_t i = 0; i < t.token_type.size(); ++i)
        if (t.token_type[i] == kUnknown) spec.unk_id = static_cast<int>(i);
    const gguf::Value* prefix = f.find("tokenizer.ggml.add_space_prefix");
    if (prefix && prefix->type != gguf::ValueType::boolean)
      refuse(what, "tokenizer.ggml.add_space_prefix", "is not BOOL");
    if (!prefix || prefix->u) {
      spec.prepend = "\u2581";
      spec.strip_start = 1;
    }
    spec.replace.emplace_back(" ", "\u2581");
  }
  if (t.add_bos == 1) {
    if (t.bos_id < 0) refuse(what, "tokenizer.ggml.add_bos_token", "is true, but there is no tokenizer.ggml.bos_token_id");
    spec.prefix_ids.push_back(static_cast<int>(t.bos_id));
  }
  if (t.add_eos == 1) {
    if (t.eos_id < 0) refuse(what, "tokenizer.ggml.add_eos_token", "is true, but there is no tokenizer.ggml.eos_token_id");
    spec.suffix_ids.push_back(static_cast<int>(t.eos_id));
  }
  HfTokenizerFiles out;
  try {
    out.tokenizer = HfBpeTokenizer::build(spec);
  } catch (const InputError& e) {  // the vocabulary's faults, named by the core: the file's name first
    throw InputError(what + ": " + e.what(), e.field);
  }
  out.bos_id = static_cast<int>(t.bos_id);
  out.eos_id = static_cast<int>(t.eos_id);
  return out;
}

}  // namespace ap

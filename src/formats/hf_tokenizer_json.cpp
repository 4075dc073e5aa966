// hf_tokenizer_json.cpp — tokenizer.json and tokenizer_config.json into an HfBpeTokenizer (see hf_tokenizer_json.h).
#include "formats/hf_tokenizer_json.h"

#include <cmath>
#include <functional>

#include "core/base/input_error.h"
#include "formats/json.h"

namespace ap {

namespace {

const std::string kFile = "tokenizer.json";

[[noreturn]] void refuse(const std::string& msg) { throw InputError(kFile + ": " + msg, kFile); }

std::string shown(const json::Value& v) { return json::excerpt(v.dump(), 60); }

const json::Value* member(const json::Value& obj, const char* key) { return obj.is_object() ? obj.find(key) : nullptr; }

bool flag(const json::Value& obj, const char* key, const std::string& where, bool dflt) {
  const json::Value* v = member(obj, key);
  if (!v || v->is_null()) return dflt;
  if (!v->is_bool()) refuse(where + "." + key + " is " + shown(*v) + ", not true or false");
  return v->as_bool();
}

std::string text_of(const json::Value& obj, const char* key, const std::string& where) {
  const json::Value* v = member(obj, key);
  if (!v || !v->is_string()) refuse(where + "." + key + " must be a string");
  return v->as_string();
}

long long whole(const json::Value& v, const std::string& where) {
  if (!v.is_number() || v.as_number() != std::floor(v.as_number()) || std::fabs(v.as_number()) > 1e9)
    refuse(where + " is " + shown(v) + ", not a whole-number id");
  return static_cast<long long>(v.as_number());
}

std::string type_of(const json::Value& v, const std::string& where) {
  if (!v.is_object()) refuse(where + " must be an object");
  return text_of(v, "type", where);
}

// Calls f on each element of a Sequence (its list under `list`), or on v itself.
void each_step(const json::Value& v, const char* list, const std::string& where,
               const std::function<void(const json::Value&, const std::string&)>& f) {
  if (v.is_null()) return;
  if (type_of(v, where) == "Sequence") {
    const json::Value* items = member(v, list);
    if (!items || !items->is_array()) refuse(where + "." + list + " must be an array");
    for (size_t i = 0; i < items->size(); ++i) f((*items)[i], where + "." + list + "[" + std::to_string(i) + "]");
  } else {
    f(v, where);
  }
}

std::string string_pattern(const json::Value& step, const std::string& where) {
  const json::Value* p = member(step, "pattern");
  const json::Value* s = p ? member(*p, "String") : nullptr;
  if (!s || !s->is_string())
    refuse(where + ".pattern is " + (p ? shown(*p) : std::string("missing")) + ": only a {\"String\": …} pattern is read");
  return s->as_string();
}

void read_model(const json::Value& model, HfBpeSpec& spec, std::vector<std::pair<std::string, long long>>& vocab,
                std::string& unk) {
  if (type_of(model, "model") != "BPE") refuse("model.type is \"" + text_of(model, "type", "model") + "\": only BPE is read");
  if (const json::Value* d = member(model, "dropout"); d && !d->is_null()) refuse("model.dropout is " + shown(*d) + ": only null is read");
  for (const char* k : {"continuing_subword_prefix", "end_of_word_suffix"})
    if (const json::Value* v = member(model, k); v && !v->is_null() && !(v->is_string() && v->as_string().empty()))
      refuse(std::string("model.") + k + " is " + shown(*v) + ": only null or \"\" is read");
  spec.byte_fallback = flag(model, "byte_fallback", "model", false);
  spec.fuse_unk = flag(model, "fuse_unk", "model", false);
  spec.ignore_merges = flag(model, "ignore_merges", "model", false);
  if (const json::Value* u = member(model, "unk_token"); u && !u->is_null()) {
    if (!u->is_string()) refuse("model.unk_token must be a string or null");
    unk = u->as_string();
  }
  const json::Value* v = member(model, "vocab");
  if (!v || !v->is_object()) refuse("model.vocab must be an object of token → id");
  for (const auto& [key, id] : v->members()) vocab.emplace_back(key, whole(id, "model.vocab key \"" + json::excerpt(key, 40) + "\""));
  const json::Value* merges = member(model, "merges");
  if (!merges || !merges->is_array()) refuse("model.merges must be an array");
  spec.merges.reserve(merges->size());
  for (size_t i = 0; i < merges->size(); ++i) {
    const json::Value& m = (*merges)[i];
    const std::string where = "model.merges[" + std::to_string(i) + "]";
    if (m.is_string()) {
      const std::string& s = m.as_string();
      const size_t sp = s.find(' ');
      if (sp == std::string::npos || sp == 0 || sp + 1 == s.size() || s.find(' ', sp + 1) != std::string::npos)
        refuse(where + " is " + shown(m) + ": not two symbol strings separated by one space");
      spec.merges.push_back({s.substr(0, sp), s.substr(sp + 1), i});
    } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string() && !m[0].as_string().empty() &&
               !m[1].as_string().empty()) {
      spec.merges.push_back({m[0].as_string(), m[1].as_string(), i});
    } else {
      refuse(where + " is " + shown(m) + ": a merge is \"a b\" or [\"a\", \"b\"]");
    }
  }
}

void read_normalizer(const json::Value& root, HfBpeSpec& spec) {
  const json::Value* n = member(root, "normalizer");
  if (!n) return;
  each_step(*n, "normalizers", "normalizer", [&](const json::Value& s, const std::string& where) {
    const std::string type = type_of(s, where);
    if (type == "NFC") spec.nfc = true;
    else if (type == "Prepend") {
      if (!spec.replace.empty()) refuse(where + ": a Prepend after a Replace is not read");
      spec.prepend += text_of(s, "prepend", where);
    } else if (type == "Replace") spec.replace.emplace_back(string_pattern(s, where), text_of(s, "content", where));
    else refuse(where + ".type is \"" + type + "\": the normalizers read are NFC, Prepend, Replace and Sequence");
  });
}

void read_pre_tokenizer(const json::Value& root, HfBpeSpec& spec) {
  const json::Value* p = member(root, "pre_tokenizer");
  spec.model = HfBpeSpec::Model::sentencepiece;
  if (!p) return;
  each_step(*p, "pretokenizers", "pre_tokenizer", [&](const json::Value& s, const std::string& where) {
    const std::string type = type_of(s, where);
    if (type == "Split") {
      const json::Value* pat = member(s, "pattern");
      const json::Value* re = pat ? member(*pat, "Regex") : nullptr;
      if (!re || !re->is_string()) refuse(where + ".pattern must be {\"Regex\": …}");
      HfPreStep step;
      if (!split_pattern_of(re->as_string(), step.pattern))
        refuse(where + ".pattern.Regex \"" + json::excerpt(re->as_string(), 60) +
               "\" is not a pattern this reader knows (llama3, qwen2 and gpt2 are)");
      if (const json::Value* b = member(s, "behavior"); !b || !b->is_string() || b->as_string() != "Isolated")
        refuse(where + ".behavior is " + (b ? shown(*b) : std::string("missing")) + ": only \"Isolated\" is read");
      if (flag(s, "invert", where, false)) refuse(where + ".invert is true: only false is read");
      spec.pre.push_back(step);
    } else if (type == "Digits") {
      if (!flag(s, "individual_digits", where, false)) refuse(where + ".individual_digits is false: only true is read");
      spec.pre.push_back({HfPreStep::Kind::digits, SplitPattern::gpt2});
    } else if (type == "ByteLevel") {
      spec.model = HfBpeSpec::Model::byte_level;
      spec.byte_level_prefix_space = flag(s, "add_prefix_space", where, true);
      if (spec.byte_level_prefix_space && !spec.pre.empty())
        refuse(where + ".add_prefix_space is true after another pre-tokenizer: not read (it would prefix every piece)");
      if (flag(s, "use_regex", where, true)) spec.pre.push_back({HfPreStep::Kind::byte_level_regex, SplitPattern::gpt2});
    } else if (type == "Metaspace") {
      if (text_of(s, "replacement", where) != "\u2581") refuse(where + ".replacement must be \"\u2581\"");
      if (flag(s, "split", where, true)) refuse(where + ".split is true: only a Metaspace that does not split is read");
      const json::Value* scheme = member(s, "prepend_scheme");
      const std::string sc = scheme && scheme->is_string() ? scheme->as_string() : flag(s, "add_prefix_space", where, true) ? "always" : "never";
      if (sc == "always") spec.metaspace = HfBpeSpec::Metaspace::always;
      else if (sc == "first") spec.metaspace = HfBpeSpec::Metaspace::first;
      else if (sc == "never") spec.metaspace = HfBpeSpec::Metaspace::never;
      else refuse(where + ".prepend_scheme is \"" + json::excerpt(sc, 20) + "\": always, first or never");
    } else {
      refuse(where + ".type is \"" + type + "\": the pre-tokenizers read are Split, Digits, ByteLevel, Metaspace and Sequence");
    }
  });
}

void read_post_processor(const json::Value& root, HfBpeSpec& spec) {
  const json::Value* p = member(root, "post_processor");
  if (!p) return;
  each_step(*p, "processors", "post_processor", [&](const json::Value& s, const std::string& where) {
    const std::string type = type_of(s, where);
    if (type == "ByteLevel") return;
    if (type != "TemplateProcessing")
      refuse(where + ".type is \"" + type + "\": the post-processors read are ByteLevel, TemplateProcessing and Sequence");
    const json::Value* single = member(s, "single");
    if (!single || !single->is_array()) refuse(where + ".single must be an array");
    bool seen_a = false;
    for (size_t i = 0; i < single->size(); ++i) {
      const json::Value& piece = (*single)[i];
      const std::string at = where + ".single[" + std::to_string(i) + "]";
      if (const json::Value* sp = member(piece, "SpecialToken")) {
        const std::string name = text_of(*sp, "id", at + ".SpecialToken");
        const json::Value* table = member(s, "special_tokens");
        const json::Value* entry = table ? member(*table, name.c_str()) : nullptr;
        const json::Value* ids = entry ? member(*entry, "ids") : nullptr;
        if (!ids || !ids->is_array()) refuse(at + ": special token \"" + json::excerpt(name, 40) + "\" has no ids in special_tokens");
        for (size_t k = 0; k < ids->size(); ++k) {
          const int id = static_cast<int>(whole((*ids)[k], at + " ids"));
          (seen_a ? spec.suffix_ids : spec.prefix_ids).push_back(id);
        }
      } else if (const json::Value* seq = member(piece, "Sequence")) {
        if (text_of(*seq, "id", at + ".Sequence") != "A" || seen_a) refuse(at + ": only one sequence, \"A\", is read");
        seen_a = true;
      } else {
        refuse(at + " is " + shown(piece) + ": a SpecialToken or a Sequence");
      }
    }
  });
}

void read_decoder(const json::Value& root, HfBpeSpec& spec) {
  const json::Value* d = member(root, "decoder");
  if (!d || d->is_null()) return;
  const bool byte_level = spec.model == HfBpeSpec::Model::byte_level;
  each_step(*d, "decoders", "decoder", [&](const json::Value& s, const std::string& where) {
    const std::string type = type_of(s, where);
    if (byte_level ? type == "ByteLevel" : (type == "ByteFallback" || type == "Fuse")) return;
    if (!byte_level && type == "Replace" && string_pattern(s, where) == "\u2581" && text_of(s, "content", where) == " ") return;
    if (!byte_level && type == "Metaspace") {
      if (text_of(s, "replacement", where) != "\u2581") refuse(where + ".replacement must be \"\u2581\"");
      spec.metaspace_decoder = true;
      return;
    }
    if (!byte_level && type == "Strip") {
      if (text_of(s, "content", where) != " ") refuse(where + ": only a Strip of \" \" is read");
      const json::Value* st = member(s, "start");
      const json::Value* stop = member(s, "stop");
      if (stop && whole(*stop, where + ".stop") != 0) refuse(where + ".stop must be 0");
      spec.strip_start = st ? static_cast<int>(whole(*st, where + ".start")) : 0;
      return;
    }
    refuse(where + ".type is \"" + type + "\": not a decoder read for a " + (byte_level ? "byte-level" : "SentencePiece-style") +
           " BPE (" + (byte_level ? "ByteLevel" : "Replace \"▁\"→\" \", ByteFallback, Fuse, Strip, Metaspace") + ")");
  });
}

// A token named by tokenizer_config.json ("bos_token": "<s>" or {"content": "<s>", …}): its id, or −1.
int config_token(const json::Value& config, const char* key, const std::function<int(const std::string&)>& id_of) {
  const json::Value* v = member(config, key);
  if (!v || v->is_null()) return -1;
  const json::Value* c = v->is_object() ? member(*v, "content") : v;
  if (!c || !c->is_string()) throw InputError(std::string("tokenizer_config.json: ") + key + " must be a string", "tokenizer_config.json");
  const int id = id_of(c->as_string());
  if (id < 0)
    throw InputError(std::string("tokenizer_config.json: ") + key + " \"" + json::excerpt(c->as_string(), 40) +
                         "\" is not a token of tokenizer.json", "tokenizer_config.json");
  return id;
}

}  // namespace

HfTokenizerFiles load_hf_tokenizer(const std::string& tokenizer_json, const std::string& config_json) {
  const json::Value root = json::parse_file(tokenizer_json, kFile);
  if (!root.is_object()) refuse("not a JSON object");
  const json::Value* model = member(root, "model");
  if (!model) refuse("has no \"model\"");
  HfBpeSpec spec;
  std::vector<std::pair<std::string, long long>> vocab;
  std::string unk;
  read_model(*model, spec, vocab, unk);
  read_normalizer(root, spec);
  read_pre_tokenizer(root, spec);
  // The vocabulary by id: the model's, then the added tokens (which may extend it).
  long long n = 0;
  for (const auto& [tok, id] : vocab) n = std::max(n, id + 1);
  const json::Value* added = member(root, "added_tokens");
  if (added && !added->is_null() && !added->is_array()) refuse("added_tokens must be an array");
  const size_t n_added = added && added->is_array() ? added->size() : 0;
  for (size_t i = 0; i < n_added; ++i) {
    const std::string where = "added_tokens[" + std::to_string(i) + "]";
    const json::Value* id = member((*added)[i], "id");
    if (!id) refuse(where + " has no id");
    n = std::max(n, whole(*id, where + ".id") + 1);
  }
  if (n > kMaxBpeVocab) refuse("ids run to " + std::to_string(n - 1) + ", past the limit of " + std::to_string(kMaxBpeVocab) + " tokens");
  spec.vocab.assign(static_cast<size_t>(n), std::string());
  for (const auto& [tok, id] : vocab) {
    if (id < 0) refuse("model.vocab key \"" + json::excerpt(tok, 40) + "\" has the negative id " + std::to_string(id));
    if (!spec.vocab[id].empty())
      refuse("model.vocab key \"" + json::excerpt(tok, 40) + "\" has id " + std::to_string(id) + ", which \"" +
             json::excerpt(spec.vocab[id], 40) + "\" has already");
    spec.vocab[id] = tok;
  }
  const bool normalizes = spec.nfc || !spec.prepend.empty() || !spec.replace.empty();
  for (size_t i = 0; i < n_added; ++i) {
    const json::Value& a = (*added)[i];
    const std::string where = "added_tokens[" + std::to_string(i) + "]";
    HfAddedToken t;
    t.id = static_cast<int>(whole(*member(a, "id"), where + ".id"));
    t.content = text_of(a, "content", where);
    t.special = flag(a, "special", where, false);
    for (const char* k : {"single_word", "lstrip", "rstrip"})
      if (flag(a, k, where, false)) refuse(where + " (\"" + json::excerpt(t.content, 40) + "\") has " + k + " true: only false is read");
    if (flag(a, "normalized", where, false) && normalizes)
      refuse(where + " (\"" + json::excerpt(t.content, 40) + "\") has normalized true beside a normalizer: not read");
    if (t.id < 0) refuse(where + ".id is negative");
    if (spec.vocab[t.id].empty()) spec.vocab[t.id] = t.content;
    else if (spec.vocab[t.id] != t.content)
      refuse(where + " (\"" + json::excerpt(t.content, 40) + "\") has id " + std::to_string(t.id) + ", which is \"" +
             json::excerpt(spec.vocab[t.id], 40) + "\" in model.vocab");
    spec.added.push_back(t);
  }
  for (size_t id = 0; id < spec.vocab.size(); ++id)
    if (spec.vocab[id].empty()) refuse("no token has id " + std::to_string(id) + " (ids run from 0 to " + std::to_string(n - 1) + " without a gap)");
  std::unordered_map<std::string, int> id_map;
  for (size_t id = 0; id < spec.vocab.size(); ++id) id_map.emplace(spec.vocab[id], static_cast<int>(id));
  const std::function<int(const std::string&)> id_of = [&](const std::string& s) {
    const auto it = id_map.find(s);
    return it == id_map.end() ? -1 : it->second;
  };
  if (!unk.empty()) {
    spec.unk_id = id_of(unk);
    if (spec.unk_id < 0) refuse("model.unk_token \"" + json::excerpt(unk, 40) + "\" is not a token");
  }
  read_post_processor(root, spec);
  read_decoder(root, spec);
  HfTokenizerFiles out;
  if (!config_json.empty()) {
    const json::Value config = json::parse_file(config_json, "tokenizer_config.json");
    out.bos_id = config_token(config, "bos_token", id_of);
    out.eos_id = config_token(config, "eos_token", id_of);
  }
  for (int id : spec.prefix_ids)
    if (id < 0 || id >= n) refuse("post_processor names the id " + std::to_string(id) + ", outside the vocabulary");
  for (int id : spec.suffix_ids)
    if (id < 0 || id >= n) refuse("post_processor names the id " + std::to_string(id) + ", outside the vocabulary");
  out.tokenizer = HfBpeTokenizer::build(spec);
  return out;
}

}  // namespace ap

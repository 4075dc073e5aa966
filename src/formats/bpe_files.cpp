// bpe_files.cpp — vocab.json + merges.txt and tokenizer.json into a BpeTokenizer (see bpe_files.h).
#include "formats/bpe_files.h"

#include <cmath>

#include "core/base/input_error.h"
#include "formats/json.h"

namespace ap {

namespace {

// token → id pairs of a vocabulary object; `where` names it in messages ("vocab.json").
std::vector<std::pair<std::string, long long>> vocab_pairs(const json::Value& v, const std::string& where,
                                                           const std::string& name) {
  if (!v.is_object()) throw InputError(where + " must be a JSON object of token → id", name);
  std::vector<std::pair<std::string, long long>> out;
  out.reserve(v.size());
  for (const auto& [key, id] : v.members()) {
    if (!id.is_number() || id.as_number() != std::floor(id.as_number()) || std::fabs(id.as_number()) > 1e9)
      throw InputError(where + " key \"" + json::excerpt(key, 40) + "\" has " + json::excerpt(id.dump(), 24) +
                           ", not a whole-number id",
                       name);
    out.emplace_back(key, static_cast<long long>(id.as_number()));
  }
  return out;
}

}  // namespace

std::shared_ptr<const BpeTokenizer> load_bpe_files(const std::string& vocab_json, const std::string& merges_txt,
                                                   const std::string& vocab_name, const std::string& merges_name) {
  const json::Value v = json::parse_file(vocab_json, vocab_name);
  return BpeTokenizer::build(vocab_pairs(v, vocab_name, vocab_name), parse_bpe_merges(merges_txt, merges_name),
                             vocab_name, merges_name);
}

std::shared_ptr<const BpeTokenizer> load_tokenizer_json(const std::string& text, const std::string& name) {
  const json::Value root = json::parse_file(text, name);
  const json::Value* model = root.is_object() ? root.find("model") : nullptr;
  if (!model || !model->is_object()) throw InputError(name + " has no \"model\" object", name);
  if (const json::Value* t = model->find("type"); t && !(t->is_string() && t->as_string() == "BPE"))
    throw InputError(name + ": model.type is " + json::excerpt(t->dump(), 40) + ", not \"BPE\"", name);
  const json::Value* vocab = model->find("vocab");
  if (!vocab) throw InputError(name + " has no model.vocab", name);
  const json::Value* merges = model->find("merges");
  if (!merges || !merges->is_array()) throw InputError(name + ": model.merges must be an array", name);
  std::vector<BpeMerge> ms;
  ms.reserve(merges->size());
  for (size_t i = 0; i < merges->size(); ++i) {
    const json::Value& m = (*merges)[i];
    const std::string where = name + " model.merges[" + std::to_string(i) + "]";
    if (m.is_string()) {
      const std::string& s = m.as_string();
      const size_t sp = s.find(' ');
      if (sp == std::string::npos || sp == 0 || sp + 1 == s.size() || s.find(' ', sp + 1) != std::string::npos)
        throw InputError(where + " is " + json::excerpt(m.dump(), 40) + ": not two symbol strings separated by one space", name);
      ms.push_back({s.substr(0, sp), s.substr(sp + 1), i});
    } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string() && !m[0].as_string().empty() &&
               !m[1].as_string().empty()) {
      ms.push_back({m[0].as_string(), m[1].as_string(), i});
    } else {
      throw InputError(where + " is " + json::excerpt(m.dump(), 40) + ": a merge is \"a b\" or [\"a\", \"b\"]", name);
    }
  }
  if (ms.empty()) throw InputError(name + ": model.merges is empty", name);
  return BpeTokenizer::build(vocab_pairs(*vocab, name + " model.vocab", name), ms, name + " model.vocab",
                             name + " model.merges", "index");
}

}  // namespace ap

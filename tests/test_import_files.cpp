// test_import_files.cpp — whole foreign model files as PyTorch and Python write them, built here in
// bytes (import.h), so that what tests/import_torch_test.py checks with Debian's PyTorch is also
// checked without it:
//  - a meta.pkl in pickle's default protocol 4 (FRAME, MEMOIZE, and stoi's keys as BINGETs of
//    itos's strings), and a ckpt.pt whose data.pkl is protocol 4 (globals memoized and fetched);
//  - torch.save's zip: each local header padded with an extra field (not in the directory) so that
//    every record's data starts at a multiple of 64;
//  - torch.compile's "_orig_mod." prefix on every state dict key;
//  - a Hugging Face model.safetensors in F16, read as the same parameters as its values in F32.
// The weights read back are compared with the values written (the params at param_tensors' offsets),
// never with another import. Limits: one tiny config; float32 storages in the ckpt.pt.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "core/model/gpt.h"
#include "formats/import.h"
#include "formats/json.h"
#include "formats/pickle.h"
#include "formats/safetensors.h"
#include "formats/zip.h"
#include "zip_writer.h"

using namespace ap;

namespace {

using zip_writer::le;
using zip_writer::make_zip;

// A pickler for torch.save's data.pkl: protocol 2 (BINUNICODE, GLOBAL), or protocol 4 as Python's
// pickle writes it (SHORT_BINUNICODE and STACK_GLOBAL, each followed by MEMOIZE; a global met again
// fetched from the memo with BINGET).
struct Pickler {
  bool v4;
  std::string b;
  std::map<std::string, int> memo;  // global → memo index
  int memoized = 0;
  explicit Pickler(bool protocol4) : v4(protocol4), b(protocol4 ? "\x80\x04" : "\x80\x02") {}
  void memoize() {
    if (!v4) return;
    b += '\x94';
    ++memoized;
  }
  void str(const std::string& s) {
    if (v4) {
      b += '\x8c' + le(s.size(), 1) + s;
    } else {
      b += 'X' + le(s.size(), 4) + s;
    }
    memoize();
  }
  void integer(int64_t n) { b += n >= 0 && n < 256 ? 'K' + le(n, 1) : 'J' + le(static_cast<uint64_t>(n), 4); }
  void global(const std::string& mod, const std::string& name) {
    const std::string key = mod + "." + name;
    if (v4 && memo.count(key)) {
      b += 'h' + le(memo[key], 1);
      return;
    }
    if (v4) {
      str(mod);
      str(name);
      b += '\x93';
      memo[key] = memoized;
      memoize();
    } else {
      b += 'c' + mod + "\n" + name + "\n";
    }
  }
  void ordered_dict() {  // collections.OrderedDict()
    global("collections", "OrderedDict");
    b += ")R";
  }
};

struct Written {  // a tensor as written to a file: its name, shape and values
  std::string name;
  std::vector<int64_t> shape;
  std::vector<float> data;
};

// The tensors of config c in param_tensors' order, with values that differ from tensor to tensor.
std::vector<Written> tensors_of(const GPTConfig& c) {
  std::vector<Written> out;
  uint32_t state = 12345;
  for (const ParamTensor& p : param_tensors(c)) {
    Written t{p.name, std::vector<int64_t>(p.shape.begin(), p.shape.end()), {}};
    for (int64_t i = 0; i < p.numel; ++i) {
      state = state * 1664525u + 1013904223u;
      t.data.push_back(static_cast<float>(static_cast<int>(state >> 20) - 2048) / 4096.0f);
    }
    out.push_back(std::move(t));
  }
  return out;
}

// nanoGPT's ckpt.pt of config c (bias on): {"model": OrderedDict of the tensors (keys with `prefix`),
// "model_args", "iter_num", "config": {"dataset"}}, float32 storages one record each.
std::string nanogpt_ckpt(const GPTConfig& c, const std::vector<Written>& ts, const std::string& prefix,
                         bool protocol4, bool pad64) {
  Pickler p(protocol4);
  p.b += "}(";
  p.str("model");
  p.ordered_dict();
  p.b += '(';
  for (size_t i = 0; i < ts.size(); ++i) {
    const Written& t = ts[i];
    p.str(prefix + t.name);
    p.global("torch._utils", "_rebuild_tensor_v2");
    p.b += "((";
    p.str("storage");
    p.global("torch", "FloatStorage");
    p.str(std::to_string(i));
    p.str("cpu");
    p.integer(static_cast<int64_t>(t.data.size()));
    p.b += "tQ";  // the persistent id's tuple, BINPERSID
    p.integer(0);
    p.b += '(';
    for (int64_t d : t.shape) p.integer(d);
    p.b += "t(";
    for (size_t d = 0; d < t.shape.size(); ++d) {
      int64_t stride = 1;
      for (size_t e = d + 1; e < t.shape.size(); ++e) stride *= t.shape[e];
      p.integer(stride);
    }
    p.b += "t\x89";  // False: requires_grad
    p.ordered_dict();
    p.b += "tR";
  }
  p.b += 'u';
  p.str("model_args");
  p.b += "}(";
  for (const auto& [k, v] : std::vector<std::pair<std::string, int>>{
           {"n_layer", c.n_layer}, {"n_head", c.n_head}, {"n_embd", c.n_embd}, {"block_size", c.block_size},
           {"vocab_size", c.vocab_size}}) {
    p.str(k);
    p.integer(v);
  }
  p.str("bias");
  p.b += "\x88u";
  p.str("iter_num");
  p.integer(300);
  p.str("config");
  p.b += "}";
  p.str("dataset");
  p.str("shakespeare_char");
  p.b += "su.";
  std::vector<std::pair<std::string, std::string>> entries{{"archive/data.pkl", p.b}, {"archive/byteorder", "little"}};
  for (size_t i = 0; i < ts.size(); ++i) {
    std::string bytes(ts[i].data.size() * 4, '\0');
    std::memcpy(bytes.data(), ts[i].data.data(), bytes.size());  // little-endian hosts (x86-64, wasm)
    entries.emplace_back("archive/data/" + std::to_string(i), bytes);
  }
  entries.emplace_back("archive/version", "3\n");
  return make_zip(entries, pad64);
}

GPTConfig tiny_config() {
  GPTConfig c;
  c.n_layer = 1, c.n_head = 2, c.n_embd = 8, c.block_size = 4, c.vocab_size = 9;
  c.bias = true;
  return c;
}

// The imported parameters equal the values written, tensor by tensor.
void check_params(const TrainState& s, const std::vector<Written>& ts) {
  const std::vector<ParamTensor> pt = param_tensors(s.model);
  REQUIRE(pt.size() == ts.size());
  REQUIRE(s.params.size() == static_cast<size_t>(s.model.num_parameters()));
  for (size_t i = 0; i < ts.size(); ++i) {
    INFO(ts[i].name);
    const std::vector<float> got(s.params.begin() + pt[i].offset, s.params.begin() + pt[i].offset + pt[i].numel);
    CHECK(got == ts[i].data);
  }
}

// The value of float16 bits by the format's definition (IEEE 754 binary16), for finite values.
float f16_value(uint16_t h) {
  const int sign = h >> 15, exp = (h >> 10) & 31, mant = h & 1023;
  const double m = exp == 0 ? std::ldexp(mant, -24) : std::ldexp(1024 + mant, exp - 25);
  return static_cast<float>(sign ? -m : m);
}

}  // namespace

TEST_CASE("meta.pkl in pickle's protocol 4: MEMOIZE numbers the memo, stoi's keys are fetched from it", "[import]") {
  // pickle.dumps({'vocab_size': 9, 'itos': itos, 'stoi': stoi}, protocol=4) of sorted(set('hello, world')),
  // as nanoGPT's prepare.py writes it (Python 3.11): stoi's keys are BINGETs of the strings itos memoized
  const std::string meta(
      "\x80\x04\x95\x84\x00\x00\x00\x00\x00\x00\x00\x7d\x94\x28\x8c\x0a\x76\x6f\x63\x61\x62\x5f\x73\x69\x7a\x65\x94"
      "\x4b\x09\x8c\x04\x69\x74\x6f\x73\x94\x7d\x94\x28\x4b\x00\x8c\x01\x20\x94\x4b\x01\x8c\x01\x2c\x94\x4b\x02\x8c"
      "\x01\x64\x94\x4b\x03\x8c\x01\x65\x94\x4b\x04\x8c\x01\x68\x94\x4b\x05\x8c\x01\x6c\x94\x4b\x06\x8c\x01\x6f\x94"
      "\x4b\x07\x8c\x01\x72\x94\x4b\x08\x8c\x01\x77\x94\x75\x8c\x04\x73\x74\x6f\x69\x94\x7d\x94\x28\x68\x04\x4b\x00"
      "\x68\x05\x4b\x01\x68\x06\x4b\x02\x68\x07\x4b\x03\x68\x08\x4b\x04\x68\x09\x4b\x05\x68\x0a\x4b\x06\x68\x0b\x4b"
      "\x07\x68\x0c\x4b\x08\x75\x75\x2e",
      143);
  const std::string chars = " ,dehlorw";
  const pickle::Pickle p = pickle::load(meta.data(), meta.size(), false, "meta.pkl");
  const pickle::Object* stoi = p.get(p.top(), "stoi");
  REQUIRE(stoi);
  REQUIRE(stoi->items.size() == 2 * chars.size());
  for (size_t i = 0; i < chars.size(); ++i) {
    CHECK(p.at(stoi->items[2 * i]).s == std::string(1, chars[i]));
    CHECK(p.at(stoi->items[2 * i + 1]).i == static_cast<int64_t>(i));
  }
  TrainState s;
  s.model = GPTConfig::tiny(9);
  set_meta_vocab(s, meta, "meta.pkl");
  REQUIRE(s.vocab.size() == chars.size());
  for (size_t i = 0; i < chars.size(); ++i) CHECK(s.vocab[i] == static_cast<char32_t>(chars[i]));
}

TEST_CASE("ckpt.pt: torch.save's padded local headers, a protocol 4 data.pkl, _orig_mod. keys", "[import]") {
  const GPTConfig c = tiny_config();
  const std::vector<Written> ts = tensors_of(c);
  {  // the zip's records are found past their local headers' extra fields, not the directory's
    const std::string z = make_zip({{"archive/data.pkl", "abc"}, {"archive/data/0", std::string(100, '\3')}}, true);
    const zip::Archive a = zip::read_archive(z, "ckpt.pt");
    for (const zip::Entry& e : a.entries) CHECK(e.offset % 64 == 0);
    const zip::Entry* pkl = a.find("archive/data.pkl");
    REQUIRE(pkl);
    CHECK(std::string(zip::entry_data(z, *pkl, "ckpt.pt"), pkl->size) == "abc");
    const zip::Entry* rec = a.find("archive/data/0");
    REQUIRE(rec);
    CHECK(std::string(zip::entry_data(z, *rec, "ckpt.pt"), rec->size) == std::string(100, '\3'));
  }
  for (const bool pad64 : {false, true})
    for (const bool protocol4 : {false, true})
      for (const std::string prefix : {"", "_orig_mod."}) {
        INFO("padded " << pad64 << ", protocol 4 " << protocol4 << ", prefix '" << prefix << "'");
        const NanoGptImport im = import_nanogpt(nanogpt_ckpt(c, ts, prefix, protocol4, pad64), "out/ckpt.pt");
        CHECK(im.state.model.n_embd == 8);
        CHECK(im.state.model.vocab_size == 9);
        CHECK(im.dataset == "shakespeare_char");
        check_params(im.state, ts);
      }
}

TEST_CASE("model.safetensors in F16: each value as float16 defines it", "[import]") {
  const GPTConfig c = tiny_config();
  // float16 bits of every kind a model holds: normal, subnormal (exponent 0), signed, zero
  uint32_t state = 777;
  std::vector<std::vector<uint16_t>> halves;
  std::vector<safetensors::TensorData> ts;
  std::vector<Written> expect;
  for (const ParamTensor& p : param_tensors(c)) {
    std::vector<uint64_t> shape(p.shape.begin(), p.shape.end());
    const std::string name = p.name.substr(std::strlen("transformer."));
    const bool conv1d = name.find("c_attn.weight") != std::string::npos ||
                        name.find("c_proj.weight") != std::string::npos || name.find("c_fc.weight") != std::string::npos;
    if (conv1d) std::swap(shape[0], shape[1]);  // HF's Conv1D: in × out
    halves.emplace_back();
    for (int64_t i = 0; i < p.numel; ++i) {
      state = state * 1664525u + 1013904223u;
      const uint16_t sign = (state >> 31) << 15, exp = (state >> 20) % 18, mant = (state >> 8) & 1023;
      halves.back().push_back(static_cast<uint16_t>(sign | exp << 10 | mant));  // exponents 0 … 17: |x| < 8
    }
    ts.push_back({name, "F16", shape, nullptr, nullptr});
    // nanoGPT's layout: a Conv1D weight transposed back
    Written t{p.name, {}, {}};
    const std::vector<uint16_t>& h = halves.back();
    if (conv1d) {
      const size_t rows = shape[0], cols = shape[1];
      for (size_t cc = 0; cc < cols; ++cc)
        for (size_t r = 0; r < rows; ++r) t.data.push_back(f16_value(h[r * cols + cc]));
    } else {
      for (uint16_t x : h) t.data.push_back(f16_value(x));
    }
    expect.push_back(std::move(t));
  }
  for (size_t i = 0; i < ts.size(); ++i) ts[i].raw = reinterpret_cast<const unsigned char*>(halves[i].data());
  const std::string file = safetensors::write_file(json::Value::object(), ts, {1 << 20, 1 << 30, "m"});
  const std::string config =
      R"({"model_type":"gpt2","activation_function":"gelu_new","n_layer":1,"n_head":2,"n_embd":8,"n_positions":4,"vocab_size":9})";
  const TrainState s = import_hf_gpt2(file, config, "model.safetensors", "config.json");
  check_params(s, expect);
  bool subnormal = false, negative = false;
  for (const Written& t : expect)
    for (float x : t.data) {
      subnormal = subnormal || (x != 0 && std::fabs(x) < 6.1035156e-05f);
      negative = negative || x < 0;
    }
  CHECK(subnormal);  // the values cover what they claim to
  CHECK(negative);
}

// test_weight_fill.cpp — a model's weights read tensor by tensor from slices (weight_fill.h) and
// the headers planned from a partial file (byte_source.h, zip.h, import.h): the same parameters
// whatever the slices' sizes (elements split between slices), for contiguous, strided and
// transposed views in float32, bfloat16 and float16; a CRC-32 or a compared tensor that disagrees,
// a value that is not finite, too few or too many bytes refused by name; a partial source asks for
// what it lacks and plans the same reads as the whole file.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <functional>

#include "formats/byte_source.h"
#include "formats/import.h"
#include "formats/safetensors.h"
#include "formats/weight_fill.h"
#include "formats/zip.h"
#include "core/attention/attention.h"
#include "input_error_util.h"

using namespace ap;

namespace {

std::string f32_bytes(const std::vector<float>& v) {
  std::string out(v.size() * 4, '\0');
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}

std::string bf16_bytes(const std::vector<float>& v) {  // exact for these values
  std::string out;
  for (float f : v) {
    uint32_t b;
    std::memcpy(&b, &f, 4);
    out.push_back(static_cast<char>((b >> 16) & 0xFF));
    out.push_back(static_cast<char>(b >> 24));
  }
  return out;
}

// What an InputError says ("no error" when nothing is refused).
std::string refusal(const std::function<void()>& f) { return input_error_util::error_of(f).message; }

// Feeds the reads from `file` in slices of `step` bytes (their concatenation, in order).
std::vector<float> fill(const std::vector<WeightRead>& reads, const std::string& file, size_t n_params, size_t step) {
  std::vector<float> params(n_params, -7.0f);
  WeightFill f(reads, params.data(), "m.bin");
  std::string all;
  for (const WeightRead& r : reads) all += file.substr(r.at, r.size);
  for (size_t at = 0; at < all.size(); at += step) f.feed(all.data() + at, std::min(step, all.size() - at));
  CHECK(f.remaining() == 0);
  f.finish();
  return params;
}

}  // namespace

TEST_CASE("weight fill: the same parameters whatever the slices, for every view and dtype", "[import]") {
  // a (2, 3) float32 tensor, a (3, 2) Conv1D weight to transpose, a (2, 2) bfloat16 view with
  // strides (1, 2) (a transposed storage) at offset 1 of a storage of 5, and float16 ones
  const std::vector<float> a{1, 2, 3, 4, 5, 6}, conv{1, 2, 3, 4, 5, 6}, storage{9, 1, 2, 3, 4};
  const std::string f16 = std::string("\x00\x3c\x00\xc0", 4);  // 1.0, -2.0
  std::string file = "head" + f32_bytes(a) + f32_bytes(conv) + bf16_bytes(storage) + f16;
  const uint64_t at_a = 4, at_conv = at_a + 24, at_s = at_conv + 24, at_h = at_s + 10;
  std::vector<WeightRead> reads(4);
  reads[0] = {"a", "", 0, at_a, 24, "float32", 0, {2, 3}, {3, 1}, false, 0, ""};
  reads[1] = {"conv", "", 0, at_conv, 24, "float32", 0, {3, 2}, {2, 1}, true, 6, ""};
  reads[2] = {"s", "data/2", zip::crc32(file.data() + at_s, 10), at_s, 10, "bfloat16", 1, {2, 2}, {1, 2}, false, 12, ""};
  reads[3] = {"h", "", 0, at_h, 4, "float16", 0, {2}, {1}, false, 16, ""};
  const std::vector<float> want{1, 2, 3, 4, 5, 6,  // a
                                1, 3, 5, 2, 4, 6,  // conv (in 3, out 2) → (out 2, in 3)
                                1, 3, 2, 4,        // s[i][j] = storage[1 + i + 2j]
                                1, -2, -7};        // h; the last parameter untouched
  for (size_t step : {size_t(1), size_t(3), size_t(7), size_t(1000)}) CHECK(fill(reads, file, 19, step) == want);

  // a damaged record, a value that is not finite, a tied tensor that differs: named
  std::string bad = file;
  bad[at_s + 2] ^= 1;
  CHECK_THAT(refusal([&] { fill(reads, bad, 19, 5); }), Catch::Contains("entry data/2 (10 bytes at byte 52) does not match its CRC-32"));
  std::string inf = file;
  const float big = INFINITY;
  std::memcpy(&inf[at_a + 8], &big, 4);
  CHECK_THAT(refusal([&] { fill(reads, inf, 19, 3); }), Catch::Contains("at element 2 (row-major)"));
  std::vector<WeightRead> tied = reads;
  tied.push_back({"lm_head", "", 0, at_a, 24, "float32", 0, {2, 3}, {3, 1}, false, 6, "lm_head differs"});
  CHECK_THAT(refusal([&] { fill(tied, file, 19, 4); }), Catch::Contains("m.bin: lm_head differs"));
  tied.back().dst = 0;  // the same values as a's: accepted
  CHECK(fill(tied, file, 19, 4) == want);

  // too many bytes, too few
  std::vector<float> p(19);
  WeightFill f(reads, p.data(), "m.bin");
  const std::string all(62, '\0');
  CHECK_THAT(refusal([&] { f.feed(all.data(), 63); }), Catch::Contains("only 62 of its weights are left"));
  f.feed(file.data() + at_a, 10);
  CHECK_THAT(refusal([&] { f.finish(); }), Catch::Contains("the file ended before tensor a was read whole (10 of 24 bytes at byte 4)"));
}

TEST_CASE("weight fill: tensors larger than the transpose's blocks, converted in bulk, the same whatever the slices", "[import]") {
  // a (70, 45) Conv1D weight in float32 and in bfloat16 (more than one 32 × 32 block each way, with
  // ragged edges), then a float32 row of 9,000 (more than the finite check's blocks of 4,096)
  const int64_t in = 70, out = 45, row = 9000;
  std::vector<float> conv(static_cast<size_t>(in * out)), vec(static_cast<size_t>(row));
  for (size_t i = 0; i < conv.size(); ++i) conv[i] = static_cast<float>(i % 251) - 125.0f;  // exact in bfloat16
  for (size_t i = 0; i < vec.size(); ++i) vec[i] = 0.25f * static_cast<float>(i % 97);
  const std::string file = f32_bytes(conv) + bf16_bytes(conv) + f32_bytes(vec);
  const uint64_t n_conv = static_cast<uint64_t>(in * out);
  std::vector<WeightRead> reads(3);
  reads[0] = {"c_attn.weight", "", 0, 0, 4 * n_conv, "float32", 0, {in, out}, {out, 1}, true, 0, ""};
  reads[1] = {"c_fc.weight", "", 0, 4 * n_conv, 2 * n_conv, "bfloat16", 0, {in, out}, {out, 1}, true, int64_t(n_conv), ""};
  reads[2] = {"wte.weight", "", 0, 6 * n_conv, 4 * static_cast<uint64_t>(row), "float32", 0, {row}, {1}, false, int64_t(2 * n_conv), ""};
  std::vector<float> want;
  for (int k = 0; k < 2; ++k)
    for (int64_t o = 0; o < out; ++o)
      for (int64_t i = 0; i < in; ++i) want.push_back(conv[static_cast<size_t>(i * out + o)]);
  want.insert(want.end(), vec.begin(), vec.end());
  const size_t n = want.size();
  // whole reads in one slice (transposed straight from it), reads split across slices (gathered),
  // elements split between slices
  for (size_t step : {size_t(5), size_t(4096), size_t(6 * n_conv), file.size()}) CHECK(fill(reads, file, n, step) == want);

  // a value that is not finite: named by its index in the file's order, in each path
  std::string bad = file;
  const float nan = std::nanf("");
  std::memcpy(&bad[4 * (3 * out + 7)], &nan, 4);  // c_attn.weight[3][7]
  for (size_t step : {size_t(7), file.size()})
    CHECK_THAT(refusal([&] { fill(reads, bad, n, step); }),
               Catch::Contains("tensor c_attn.weight holds nan at element " + std::to_string(3 * out + 7) + " (row-major)"));
  bad = file;
  const float inf = -INFINITY;
  std::memcpy(&bad[6 * n_conv + 4 * 8191], &inf, 4);
  for (size_t step : {size_t(7), file.size()})
    CHECK_THAT(refusal([&] { fill(reads, bad, n, step); }), Catch::Contains("tensor wte.weight holds -inf at element 8191 (row-major)"));
}

TEST_CASE("a partial source: planning asks for the bytes it lacks, then plans what the whole file does", "[import]") {
  // a GPT-2-shaped safetensors file (HF's names, Conv1D) of one layer
  GPTConfig c;
  c.n_layer = 1, c.n_head = 2, c.n_embd = 8, c.block_size = 4, c.vocab_size = 5;
  std::vector<std::vector<float>> data;
  std::vector<safetensors::TensorData> ts;
  for (const ParamTensor& p : param_tensors(c)) {
    std::vector<uint64_t> shape(p.shape.begin(), p.shape.end());
    const std::string name = p.name.substr(12);
    if (name.find("c_attn.weight") != std::string::npos || name.find("c_proj.weight") != std::string::npos ||
        name.find("c_fc.weight") != std::string::npos)
      std::swap(shape[0], shape[1]);
    data.emplace_back(static_cast<size_t>(p.numel));
    for (size_t i = 0; i < data.back().size(); ++i) data.back()[i] = 0.01f * static_cast<float>(i % 17) - 0.05f;
    ts.push_back({name, "F32", shape, nullptr, nullptr});
  }
  for (size_t i = 0; i < ts.size(); ++i) ts[i].f32 = data[i].data();
  const std::string file = safetensors::write_file(json::Value::object(), ts, {1 << 20, 1 << 30, "m"});
  const std::string config = R"({"model_type":"gpt2","n_layer":1,"n_head":2,"n_embd":8,"n_positions":4,"vocab_size":5})";
  const ImportPlan whole = plan_hf_gpt2(StringSource(file), config, "model.safetensors", "config.json");

  PartialSource part(file.size());
  part.add(0, file.substr(0, 8));  // the length alone
  int rounds = 0;
  ImportPlan plan;
  for (;; ++rounds) {
    REQUIRE(rounds < 4);
    try {
      plan = plan_hf_gpt2(part, config, "model.safetensors", "config.json");
      break;
    } catch (const NeedBytes& n) {
      for (const ByteRange& r : n.ranges) part.add(r.first, file.substr(r.first, r.second));
    }
  }
  CHECK(rounds == 1);
  CHECK(part.held() < file.size() / 2);  // the header, not the weights
  REQUIRE(plan.reads.size() == whole.reads.size());
  for (size_t i = 0; i < plan.reads.size(); ++i) {
    CHECK(plan.reads[i].at == whole.reads[i].at);
    CHECK(plan.reads[i].transpose == whole.reads[i].transpose);
  }
  // and a zip (what torch.save writes) is found from its tail: not a safetensors, not a zip here
  CHECK_FALSE(is_torch_zip(part));
  CHECK(is_foreign_safetensors(part));
}

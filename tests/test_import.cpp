// test_import.cpp — the readers under nanoGPT's import (formats/zip.h, formats/pickle.h) on hand-made
// bytes, without PyTorch: what they take, and what they refuse with the byte or entry named.
// (tests/import_torch_test.py checks the whole import against files torch.save wrote.)
#include <catch2/catch.hpp>

#include <string>

#include "formats/pickle.h"
#include "formats/zip.h"
#include "core/attention/attention.h"
#include "core/model/train.h"
#include "input_error_util.h"
#include "zip_writer.h"

using ap::InputError;
namespace pk = ap::pickle;
namespace zip = ap::zip;

namespace {

using zip_writer::le;
using zip_writer::make_zip;

// What an InputError says ("no error" when nothing is refused).
std::string refusal(const std::function<void()>& f) { return input_error_util::error_of(f).message; }

pk::Pickle load(const std::string& s, bool torch = true) { return pk::load(s.data(), s.size(), torch, "t.pkl"); }
// A literal's bytes, NULs included.
template <size_t N>
pk::Pickle load(const char (&s)[N], bool torch = true) {
  return load(std::string(s, N - 1), torch);
}

}  // namespace

TEST_CASE("zip: stored entries read back, damage refused naming the entry or byte", "[import]") {
  const std::string z = make_zip({{"archive/data.pkl", "hello"}, {"archive/data/0", std::string(64, '\7')}});
  REQUIRE(zip::looks_like_zip(z));
  const zip::Archive a = zip::read_archive(z, "ckpt.pt");
  REQUIRE(a.entries.size() == 2);
  const zip::Entry* e = a.find("archive/data.pkl");
  REQUIRE(e);
  CHECK(std::string(zip::entry_data(z, *e, "ckpt.pt"), e->size) == "hello");
  CHECK(a.find("archive/data/1") == nullptr);

  CHECK_THAT(refusal([&] { zip::read_archive(z.substr(0, z.size() / 2), "ckpt.pt"); }),
             Catch::Contains("no end-of-central-directory record"));
  CHECK_THAT(refusal([&] { zip::read_archive("PK", "ckpt.pt"); }), Catch::Contains("too few for a zip"));
  CHECK_THAT(refusal([&] { zip::read_archive(make_zip({{"a", "xyz"}}, false, 8), "ckpt.pt"); }),
             Catch::Contains("entry a is compressed (method 8)"));
  std::string bad = z;
  bad[30 + 16 + 1] ^= 1;  // a byte of data.pkl's data
  const zip::Archive b = zip::read_archive(bad, "ckpt.pt");
  CHECK_THAT(refusal([&] { zip::entry_data(bad, *b.find("archive/data.pkl"), "ckpt.pt"); }),
             Catch::Contains("does not match its CRC-32"));
  // an absurd size in the directory
  std::string absurd = z;
  const size_t dir = absurd.find(std::string("PK\1\2"));
  absurd.replace(dir + 20, 8, le(0x7FFFFFF0, 4) + le(0x7FFFFFF0, 4));
  CHECK_THAT(refusal([&] { zip::read_archive(absurd, "ckpt.pt"); }),
             Catch::Contains("entry archive/data.pkl claims 2147483632 bytes") && Catch::Contains("past the end"));
  // an end record claiming more entries than its directory holds
  std::string many = z;
  many.replace(many.size() - 22 + 10, 2, le(0xFFF0, 2));
  CHECK_THAT(refusal([&] { zip::read_archive(many, "ckpt.pt"); }), Catch::Contains("65520 entries"));
}

TEST_CASE("pickle: a state dict's values, anything else refused by name, nothing run", "[import]") {
  // {'a': 1, 'b': [1.5, 'x'], 'c': (True, None), 'd': -2}, protocol 2, with the memo
  const std::string ok(
      "\200\002\175\161\000\050\130\001\000\000\000\141\161\001\113\001\130\001\000\000\000\142\161\002\135"
      "\161\003\050\107\077\370\000\000\000\000\000\000\130\001\000\000\000\170\161\004\145\130\001\000\000\000\143"
      "\161\005\210\116\206\161\006\130\001\000\000\000\144\161\007\112\376\377\377\377\165\056",
      74);  // pickle.dumps(..., protocol=2)
  const pk::Pickle p = load(ok);
  REQUIRE(p.top().kind == pk::Kind::dict);
  CHECK(p.get(p.top(), "a")->i == 1);
  const pk::Object& b = *p.get(p.top(), "b");
  REQUIRE(b.kind == pk::Kind::list);
  REQUIRE(b.items.size() == 2);
  CHECK(p.at(b.items[0]).f == 1.5);
  CHECK(p.at(b.items[1]).s == "x");
  const pk::Object& c = *p.get(p.top(), "c");
  CHECK(c.kind == pk::Kind::tuple);
  CHECK(p.at(c.items[0]).kind == pk::Kind::boolean);
  CHECK(p.get(p.top(), "d")->i == -2);

  CHECK_THAT(refusal([] { load("\x80\x02" "cos\nsystem\nX\x02\0\0\0ls\x85R."); }),
             Catch::Contains("the global os.system at byte 2") && Catch::Contains("nothing in the file was run"));
  CHECK_THAT(refusal([] { load("\x80\x02" "cbuiltins\neval\nX\x01\0\0\0" "1\x85R."); }),
             Catch::Contains("builtins.eval"));
  CHECK_THAT(refusal([] { load("\x80\x04\x8c\x02os\x8c\x06system\x93."); }), Catch::Contains("os.system"));
  CHECK_THAT(refusal([] { load("\x80\x02" "ctorch\nFloatStorage\n)R."); }),
             Catch::Contains("REDUCE at byte 23 calls torch.FloatStorage"));
  CHECK_THAT(refusal([] { load("\x80\x02X\x01\0\0\0a)R."); }), Catch::Contains("REDUCE at byte 9 calls a string"));
  // of torch's globals only the storage types and the tensor's rebuild: any other is refused by name
  // at its GLOBAL, before anything could call it
  CHECK_THAT(refusal([] { load("\x80\x02" "ctorch\nload\n)R."); }),
             Catch::Contains("the global torch.load at byte 2") && Catch::Contains("nothing in the file was run"));
  CHECK_THAT(refusal([] { load("\x80\x02" "ctorch._utils\n_rebuild_parameter\n."); }),
             Catch::Contains("the global torch._utils._rebuild_parameter at byte 2"));
  CHECK_THAT(refusal([] { load("\x80\x04\x8c\x05torch\x8c\x04save\x93."); }), Catch::Contains("the global torch.save"));
  // a meta.pkl holds no tensors: torch's globals are refused there too
  CHECK_THAT(refusal([] { load("\x80\x02" "ctorch._utils\n_rebuild_tensor_v2\n.", false); }),
             Catch::Contains("torch._utils._rebuild_tensor_v2"));
  CHECK_THAT(refusal([] { load("\x80\x02(o."); }), Catch::Contains("opcode 0x6f (OBJ) at byte 3"));
  CHECK_THAT(refusal([] { load("\x80\x02}"); }), Catch::Contains("without its STOP opcode"));
  CHECK_THAT(refusal([] { load("\x80\x02X\xff\xff\xff\x7f" "abc."); }), Catch::Contains("claims 2147483647 bytes"));
  CHECK_THAT(refusal([] { load("\x80\x02h\x05."); }), Catch::Contains("the memo has no entry 5"));
  CHECK_THAT(refusal([] { load("\x80\x02\x8a\x09" "123456789."); }), Catch::Contains("more than 64 bits"));
  CHECK_THAT(refusal([] { load("\x80\x02K\x01K\x02."); }), Catch::Contains("leaves 2 values"));
  // a list that holds itself: the arena has no ownership, so no cycle leaks and nothing recurses
  const pk::Pickle self = load("\x80\x02]q\x00h\x00\x61.");
  CHECK(self.top().items.size() == 1);
  CHECK(self.top().items[0] == self.root);
}

TEST_CASE("an opened model-only state: inference only, token ids without a vocabulary", "[import]") {
  ap::TrainState s;
  s.model = ap::GPTConfig::tiny(30);
  s.source = "a test model";
  const size_t n = static_cast<size_t>(s.model.num_parameters());
  s.params.assign(n, 0.01f);
  std::unique_ptr<ap::Trainer> t = ap::Trainer::open(std::move(s));
  CHECK(s.params.empty());  // moved into the model, not copied
  CHECK(t->opened());
  CHECK(t->model().use() == ap::ModelUse::infer);
  const ap::CharTokenizer& tok = t->tokenizer();
  CHECK(tok.is_ids());
  CHECK(tok.vocab_size() == 30);
  CHECK(tok.encode("[1][2] 3,4\n29") == std::vector<int>{1, 2, 3, 4, 29});
  CHECK(tok.decode(std::vector<int>{1, 29}) == "[1][29]");
  CHECK_THAT(refusal([&] { tok.encode("[30]"); }), Catch::Contains("token id 30 at byte 1 of the prompt is outside the vocabulary: ids run from 0 to 29"));
  CHECK_THAT(refusal([&] { tok.encode("[1]x"); }), Catch::Contains("give the prompt as token ids"));
  CHECK_THAT(refusal([&] { t->step(); }), Catch::Contains("opened from a test model: it is for inference"));
  CHECK_THAT(refusal([&] { t->evaluate(); }), Catch::Contains("for inference"));
  const ap::TrainState back = t->state();
  CHECK(back.params.size() == n);
  CHECK(back.m.empty());
  CHECK(back.source == "a test model");
  CHECK(t->state_meta().params.empty());
}

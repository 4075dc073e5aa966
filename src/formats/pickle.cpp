// pickle.cpp — the restricted unpickler (pickle.h): Python's pickle machine for the opcodes a
// state dict uses, over an arena of plain values. Nothing is called: the two callables REDUCE
// takes (OrderedDict, _rebuild_tensor_v2) are rebuilt here as data.
#include "formats/pickle.h"

#include <cstdio>
#include <cstring>
#include <unordered_map>

#include "core/base/input_error.h"

namespace ap::pickle {

namespace {

constexpr size_t kMaxMemo = size_t(1) << 20;
constexpr size_t kMaxDims = 64;

struct StorageType {
  const char* global;
  const char* dtype;
  int size;
};
const StorageType kStorages[] = {
    {"torch.FloatStorage", "float32", 4},  {"torch.BFloat16Storage", "bfloat16", 2},
    {"torch.HalfStorage", "float16", 2},   {"torch.DoubleStorage", "float64", 8},
    {"torch.LongStorage", "int64", 8},     {"torch.IntStorage", "int32", 4},
    {"torch.ShortStorage", "int16", 2},    {"torch.CharStorage", "int8", 1},
    {"torch.ByteStorage", "uint8", 1},     {"torch.BoolStorage", "bool", 1}};
constexpr const char* kOrderedDict = "collections.OrderedDict";
constexpr const char* kRebuildTensor = "torch._utils._rebuild_tensor_v2";

// The opcodes' names, for messages about those refused.
const char* opcode_name(unsigned char op) {
  switch (op) {
    case 'c': return "GLOBAL";
    case 0x93: return "STACK_GLOBAL";
    case 'R': return "REDUCE";
    case 'i': return "INST";
    case 'o': return "OBJ";
    case 0x81: return "NEWOBJ";
    case 0x92: return "NEWOBJ_EX";
    case 0x82: return "EXT1";
    case 0x83: return "EXT2";
    case 0x84: return "EXT4";
    case 'P': return "PERSID";
    case 'S': return "STRING";
    case 'V': return "UNICODE";
    case 'I': return "INT";
    case 'L': return "LONG";
    case 'F': return "FLOAT";
    case 'p': return "PUT";
    case 'g': return "GET";
    case 'l': return "LIST";
    case 'd': return "DICT";
    case 0x8f: return "EMPTY_SET";
    case 0x90: return "ADDITEMS";
    case 0x91: return "FROZENSET";
    case 0x96: return "BYTEARRAY8";
    case 0x97: return "NEXT_BUFFER";
    case 0x98: return "READONLY_BUFFER";
    default: return "an unknown opcode";
  }
}

class Machine {
 public:
  Machine(const char* p, size_t n, bool torch, std::string what) : p_(p), n_(n), torch_(torch), what_(std::move(what)) {}

  Pickle run() {
    for (;;) {
      if (pos_ >= n_) fail("the pickle ends at byte " + std::to_string(n_) + " without its STOP opcode (truncated)");
      op_at_ = pos_;
      const unsigned char op = byte();
      if (op == '.') break;
      step(op);
    }
    if (stack_.size() != 1 || !marks_.empty())
      fail("STOP at byte " + std::to_string(op_at_) + " leaves " + std::to_string(stack_.size()) +
           " values on the stack, not one");
    out_.root = stack_.back();
    return std::move(out_);
  }

 private:
  [[noreturn]] void fail(const std::string& message) const { throw InputError(what_ + ": " + message, what_); }
  std::string here() const { return " at byte " + std::to_string(op_at_); }

  void need(size_t k) const {
    if (n_ - pos_ < k)
      fail("the opcode" + here() + " needs " + std::to_string(k) + " more bytes than the pickle has (truncated)");
  }
  unsigned char byte() {
    need(1);
    return static_cast<unsigned char>(p_[pos_++]);
  }
  uint64_t le(int k) {
    need(static_cast<size_t>(k));
    uint64_t v = 0;
    for (int i = k - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p_[pos_ + static_cast<size_t>(i)]);
    pos_ += static_cast<size_t>(k);
    return v;
  }
  std::string bytes(uint64_t k) {
    if (k > n_ - pos_)
      fail("a string" + here() + " claims " + std::to_string(k) + " bytes, more than the pickle has left (" +
           std::to_string(n_ - pos_) + ")");
    std::string s(p_ + pos_, static_cast<size_t>(k));
    pos_ += static_cast<size_t>(k);
    return s;
  }
  std::string line() {
    const void* nl = std::memchr(p_ + pos_, '\n', n_ - pos_);
    if (!nl) fail("GLOBAL" + here() + " has no end of line (truncated)");
    const size_t len = static_cast<size_t>(static_cast<const char*>(nl) - (p_ + pos_));
    std::string s(p_ + pos_, len);
    pos_ += len + 1;
    return s;
  }

  size_t add(Object o) {
    out_.objects.push_back(std::move(o));
    return out_.objects.size() - 1;
  }
  void push(Object o) { stack_.push_back(add(std::move(o))); }
  size_t pop() {
    if (stack_.size() <= (marks_.empty() ? 0 : marks_.back()))
      fail("an opcode" + here() + " pops from an empty stack (or past its MARK)");
    const size_t v = stack_.back();
    stack_.pop_back();
    return v;
  }
  size_t top() {
    if (stack_.size() <= (marks_.empty() ? 0 : marks_.back())) fail("an opcode" + here() + " needs a value on the stack");
    return stack_.back();
  }
  // The values since the last MARK, which is dropped.
  std::vector<size_t> pop_mark() {
    if (marks_.empty()) fail("an opcode" + here() + " needs a MARK and there is none");
    std::vector<size_t> items(stack_.begin() + static_cast<std::ptrdiff_t>(marks_.back()), stack_.end());
    stack_.resize(marks_.back());
    marks_.pop_back();
    return items;
  }
  Object& obj(size_t i) { return out_.objects[i]; }

  void global(const std::string& name) {
    bool allowed = name == kOrderedDict || (torch_ && name == kRebuildTensor);
    for (const StorageType& t : kStorages) allowed = allowed || (torch_ && name == t.global);
    if (!allowed)
      fail("the pickle asks for the global " + name + here() +
           ", which a saved state dict never uses: refused (nothing in the file was run)");
    Object o;
    o.kind = Kind::global;
    o.s = name;
    push(std::move(o));
  }

  void memo_put(uint64_t k) {
    if (memo_.size() >= kMaxMemo && !memo_.count(k))
      fail("more than " + std::to_string(kMaxMemo) + " memo entries" + here());
    memo_[k] = top();
  }
  void memo_get(uint64_t k) {
    const auto it = memo_.find(k);
    if (it == memo_.end()) fail("the memo has no entry " + std::to_string(k) + " (asked" + here() + ")");
    stack_.push_back(it->second);
  }

  void push_int(int64_t v) {
    Object o;
    o.kind = Kind::integer;
    o.i = v;
    push(std::move(o));
  }
  void push_tuple(std::vector<size_t> items) {
    Object o;
    o.kind = Kind::tuple;
    o.items = std::move(items);
    push(std::move(o));
  }
  void append(size_t list, const std::vector<size_t>& items) {
    if (obj(list).kind != Kind::list) fail("APPEND" + here() + " on " + kind_name(obj(list).kind) + ", not a list");
    obj(list).items.insert(obj(list).items.end(), items.begin(), items.end());
  }
  void set_items(size_t dict, const std::vector<size_t>& items) {
    if (obj(dict).kind != Kind::dict) fail("SETITEM" + here() + " on " + kind_name(obj(dict).kind) + ", not a dict");
    if (items.size() % 2) fail("SETITEMS" + here() + " has a key without its value");
    obj(dict).items.insert(obj(dict).items.end(), items.begin(), items.end());
  }

  std::vector<int64_t> ints_of(size_t t, const char* what) {
    const Object& o = obj(t);
    if (o.kind != Kind::tuple) fail(std::string("a tensor's ") + what + here() + " is " + kind_name(o.kind) + ", not a tuple");
    if (o.items.size() > kMaxDims) fail(std::string("a tensor's ") + what + here() + " has more than 64 dimensions");
    std::vector<int64_t> v;
    for (size_t i : o.items) {
      if (obj(i).kind != Kind::integer || obj(i).i < 0)
        fail(std::string("a tensor's ") + what + here() + " holds something other than a count ≥ 0");
      v.push_back(obj(i).i);
    }
    return v;
  }

  // REDUCE: the two callables a state dict uses, rebuilt as data; anything else refused.
  void reduce() {
    const size_t args = pop(), fn = pop();
    const Object& f = obj(fn);
    if (f.kind != Kind::global)
      fail("REDUCE" + here() + " calls " + kind_name(f.kind) + ": refused (nothing in the file was run)");
    if (obj(args).kind != Kind::tuple) fail("REDUCE" + here() + " has arguments that are not a tuple");
    const std::vector<size_t> a = obj(args).items;
    if (f.s == kOrderedDict) {
      if (!a.empty()) fail("OrderedDict" + here() + " is given arguments; a state dict's has none");
      Object o;
      o.kind = Kind::dict;
      push(std::move(o));
      return;
    }
    if (f.s != kRebuildTensor)
      fail("REDUCE" + here() + " calls " + f.s + ", which a saved state dict never calls: refused (nothing in the file was run)");
    // _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks[, metadata])
    if (a.size() < 6 || a.size() > 7)
      fail("_rebuild_tensor_v2" + here() + " has " + std::to_string(a.size()) + " arguments, not 6 or 7");
    if (obj(a[0]).kind != Kind::storage) fail("_rebuild_tensor_v2" + here() + " is not given a storage");
    if (obj(a[1]).kind != Kind::integer || obj(a[1]).i < 0)
      fail("_rebuild_tensor_v2" + here() + " has a storage offset that is not a count ≥ 0");
    Object t;
    t.kind = Kind::tensor;
    t.storage = a[0];
    t.offset = obj(a[1]).i;
    t.shape = ints_of(a[2], "size");
    t.stride = ints_of(a[3], "stride");
    if (t.shape.size() != t.stride.size()) fail("a tensor" + here() + " has " + std::to_string(t.shape.size()) +
                                                " sizes but " + std::to_string(t.stride.size()) + " strides");
    push(std::move(t));
  }

  // BINPERSID: torch.save's ('storage', type, key, location, numel).
  void persistent() {
    const size_t pid = pop();
    const Object& o = obj(pid);
    if (!torch_) fail("a persistent id" + here() + " in a pickle that holds no tensors");
    const bool ok = o.kind == Kind::tuple && o.items.size() == 5 && obj(o.items[0]).kind == Kind::string &&
                    obj(o.items[0]).s == "storage" && obj(o.items[1]).kind == Kind::global &&
                    obj(o.items[2]).kind == Kind::string && obj(o.items[4]).kind == Kind::integer &&
                    obj(o.items[4]).i >= 0;
    if (!ok) fail("the persistent id" + here() + " is not torch.save's ('storage', type, key, location, numel)");
    Object s;
    s.kind = Kind::storage;
    for (const StorageType& t : kStorages)
      if (obj(o.items[1]).s == t.global) s.s = t.dtype;
    if (s.s.empty()) fail("the persistent id" + here() + " names " + obj(o.items[1]).s + ", not a storage type");
    s.key = obj(o.items[2]).s;
    s.i = obj(o.items[4]).i;
    push(std::move(s));
  }

  void step(unsigned char op) {
    switch (op) {
      case 0x80: {  // PROTO
        const unsigned v = byte();
        if (v > 5) fail("pickle protocol " + std::to_string(v) + here() + ": this reader takes up to 5");
        return;
      }
      case 0x95: le(8); return;  // FRAME: a hint of the next frame's size
      case '(': marks_.push_back(stack_.size()); return;
      case '0': pop(); return;
      case '1': pop_mark(); return;
      case '2': stack_.push_back(top()); return;
      case 'N': push(Object{}); return;
      case 0x88:
      case 0x89: {
        Object o;
        o.kind = Kind::boolean;
        o.i = op == 0x88;
        push(std::move(o));
        return;
      }
      case 'J': push_int(static_cast<int32_t>(static_cast<uint32_t>(le(4)))); return;
      case 'K': push_int(static_cast<int64_t>(le(1))); return;
      case 'M': push_int(static_cast<int64_t>(le(2))); return;
      case 0x8a: {  // LONG1: n bytes, little-endian two's complement
        const unsigned k = byte();
        if (k > 8) fail("an integer of " + std::to_string(k) + " bytes" + here() + ": more than 64 bits");
        uint64_t v = k ? le(static_cast<int>(k)) : 0;
        if (k && k < 8 && (v >> (8 * k - 1)) & 1) v |= ~uint64_t(0) << (8 * k);  // sign-extend
        push_int(static_cast<int64_t>(v));
        return;
      }
      case 'G': {  // BINFLOAT: big-endian float64
        need(8);
        uint64_t bits = 0;
        for (int i = 0; i < 8; ++i) bits = (bits << 8) | static_cast<unsigned char>(p_[pos_ + static_cast<size_t>(i)]);
        pos_ += 8;
        Object o;
        o.kind = Kind::real;
        std::memcpy(&o.f, &bits, 8);
        push(std::move(o));
        return;
      }
      case 'X':
      case 0x8c:
      case 0x8d:
      case 'B':
      case 'C': {
        const int k = op == 0x8c || op == 'C' ? 1 : op == 0x8d ? 8 : 4;
        Object o;
        o.kind = op == 'B' || op == 'C' ? Kind::bytes : Kind::string;
        o.s = bytes(le(k));
        push(std::move(o));
        return;
      }
      case ')': push_tuple({}); return;
      case 't': push_tuple(pop_mark()); return;
      case 0x85:
      case 0x86:
      case 0x87: {
        std::vector<size_t> items(static_cast<size_t>(op - 0x84));
        for (size_t i = items.size(); i-- > 0;) items[i] = pop();
        push_tuple(std::move(items));
        return;
      }
      case ']':
      case '}': {
        Object o;
        o.kind = op == ']' ? Kind::list : Kind::dict;
        push(std::move(o));
        return;
      }
      case 'a': {
        const size_t v = pop();
        append(top(), {v});
        return;
      }
      case 'e': {
        const std::vector<size_t> items = pop_mark();
        append(top(), items);
        return;
      }
      case 's': {
        const size_t v = pop(), k = pop();
        set_items(top(), {k, v});
        return;
      }
      case 'u': {
        const std::vector<size_t> items = pop_mark();
        set_items(top(), items);
        return;
      }
      case 'q': memo_put(le(1)); return;
      case 'r': memo_put(le(4)); return;
      case 0x94: memo_put(memo_.size()); return;
      case 'h': memo_get(le(1)); return;
      case 'j': memo_get(le(4)); return;
      case 'c': {
        const std::string module = line();
        global(module + "." + line());
        return;
      }
      case 0x93: {  // STACK_GLOBAL: module and name from the stack
        const size_t name = pop(), module = pop();
        if (obj(module).kind != Kind::string || obj(name).kind != Kind::string)
          fail("STACK_GLOBAL" + here() + " is not given two strings");
        global(obj(module).s + "." + obj(name).s);
        return;
      }
      case 'R': reduce(); return;
      case 'b': {  // BUILD: only an OrderedDict's attributes (a state dict's _metadata), dropped
        pop();
        if (obj(top()).kind != Kind::dict)
          fail("BUILD" + here() + " on " + kind_name(obj(top()).kind) + ": only a dict's attributes are accepted");
        return;
      }
      case 'Q': persistent(); return;
      default: {
        char hex[8];
        std::snprintf(hex, sizeof hex, "0x%02x", op);
        fail("opcode " + std::string(hex) + " (" + opcode_name(op) + ")" + here() +
             " is not one a saved state dict uses: refused (nothing in the file was run)");
      }
    }
  }

  const char* p_;
  size_t n_;
  size_t pos_ = 0, op_at_ = 0;
  bool torch_;
  std::string what_;
  Pickle out_;
  std::vector<size_t> stack_, marks_;
  std::unordered_map<uint64_t, size_t> memo_;
};

}  // namespace

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::none: return "None";
    case Kind::boolean: return "a bool";
    case Kind::integer: return "an integer";
    case Kind::real: return "a float";
    case Kind::string: return "a string";
    case Kind::bytes: return "bytes";
    case Kind::tuple: return "a tuple";
    case Kind::list: return "a list";
    case Kind::dict: return "a dict";
    case Kind::global: return "a global";
    case Kind::storage: return "a storage";
    case Kind::tensor: return "a tensor";
  }
  return "a value";
}

const Object* Pickle::get(const Object& dict, const std::string& key) const {
  const Object* found = nullptr;
  for (size_t i = 0; i + 1 < dict.items.size(); i += 2) {
    const Object& k = objects[dict.items[i]];
    if (k.kind == Kind::string && k.s == key) found = &objects[dict.items[i + 1]];
  }
  return found;
}

int dtype_size(const std::string& dtype) {
  for (const StorageType& t : kStorages)
    if (dtype == t.dtype) return t.size;
  return 0;
}

Pickle load(const char* data, size_t n, bool torch, const std::string& what) {
  return Machine(data, n, torch, what).run();
}

}  // namespace ap::pickle

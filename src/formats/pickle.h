// pickle.h — a RESTRICTED unpickler: reads the pickles a PyTorch state dict (torch.save's
// data.pkl) and nanoGPT's meta.pkl are made of, into plain values, and executes nothing.
//
// It knows the opcodes of protocols 2 to 4 that such pickles use: PROTO, FRAME, STOP; MARK, POP,
// POP_MARK, DUP; NONE, NEWTRUE, NEWFALSE, BININT, BININT1, BININT2, LONG1 (up to 8 bytes),
// BINFLOAT; BINUNICODE, SHORT_BINUNICODE, BINUNICODE8, BINBYTES, SHORT_BINBYTES; EMPTY_TUPLE,
// TUPLE, TUPLE1-3, EMPTY_LIST, APPEND, APPENDS, EMPTY_DICT, SETITEM, SETITEMS; the memo (BINPUT,
// LONG_BINPUT, MEMOIZE, BINGET, LONG_BINGET); GLOBAL and STACK_GLOBAL for the allowed globals
// only; REDUCE on the allowed callables only; BUILD on a dict (an OrderedDict's attributes, which
// are dropped); BINPERSID for torch.save's storage records. Any other opcode is refused by name
// and byte.
//
// Globals (torch = true, a data.pkl): collections.OrderedDict, torch._utils._rebuild_tensor_v2,
// and the typed storages torch.FloatStorage, BFloat16Storage, HalfStorage, DoubleStorage,
// LongStorage, IntStorage, ShortStorage, CharStorage, ByteStorage, BoolStorage. Without torch (a
// meta.pkl): collections.OrderedDict only. Any other global (os.system, builtins.eval, …) is
// refused by name when the pickle names it, and REDUCE refuses any callable but OrderedDict and
// _rebuild_tensor_v2, so nothing a pickle asks for is ever run: the result is data.
//
// A tensor is kept as a description (its storage's key, dtype and size, offset, shape, stride);
// the caller reads the storage's bytes from the archive (import.cpp).
//
// Limits: objects are in one arena (a pickle's references are indices, so shared and cyclic
// structures cost nothing and nothing recurses); integers beyond 64 bits, more than 2^20 memo
// entries, more than 64 dimensions are refused. Errors are InputError with field `what` (the
// file's name for messages: "data.pkl"), the message naming the byte at fault.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ap::pickle {

enum class Kind { none, boolean, integer, real, string, bytes, tuple, list, dict, global, storage, tensor };

struct Object {
  Kind kind = Kind::none;
  int64_t i = 0;               // boolean, integer; a storage's number of elements
  double f = 0;                // real
  std::string s;               // string, bytes; a global's "module.name"; a storage's dtype ("float32")
  std::vector<size_t> items;   // tuple, list; dict: key, value, key, value, … (a later key wins)
  std::string key;             // storage: its record's name in the archive ("data/0" without the prefix)
  size_t storage = 0;          // tensor: its storage object
  int64_t offset = 0;          // tensor: its first element in the storage
  std::vector<int64_t> shape, stride;  // tensor
};

struct Pickle {
  std::vector<Object> objects;
  size_t root = 0;
  const Object& at(size_t i) const { return objects[i]; }
  const Object& top() const { return objects[root]; }
  // The value of a dict's string key (the last one given), or null.
  const Object* get(const Object& dict, const std::string& key) const;
};

// A kind's name in messages ("a dict", "a string").
const char* kind_name(Kind k);

// The pickle's value. Throws InputError (field `what`).
Pickle load(const char* data, size_t n, bool torch, const std::string& what);

// The element size of a storage dtype ("float32" → 4).
int dtype_size(const std::string& dtype);

}  // namespace ap::pickle

// data.h — the GPT's training data: built-in generated tasks, the train/validation split, a seeded
// batch sampler (nanoGPT's random windows) and deterministic validation batches.
//
// Built-in tasks (generate_task_text), each a stream of independent lines ending in '\n':
//   copy       cabej=cabej          a random string over a–j (3–8 letters), '=', the same again
//   reverse    cabej=jebac          … then the string reversed
//   sort       cabej=abcej          … then its letters sorted
//   induction  qwhzbk…qwhzbk…       8–24 distinct random letters a–z, then the same letters again
//   sums       12+34=46             two numbers 0–99 and their sum
//   grammar    the cat sees a dog.  a tiny English with number agreement, optionally across a
//                                   relative clause ("the cats that see a dog like the bird.")
// The text depends only on (task, seed, n_chars): ap::Rng with derive_seed, integer arithmetic
// only, so native and wasm builds generate the same bytes. Every task is ASCII, so characters are
// bytes. TaskInfo::loss_floor is the mean loss per character (nats) of a perfect model that sees
// each line from its start: the entropy of a line divided by its mean length (see data.cpp). A
// model trained on windows of T characters pays more at the start of a window that begins
// mid-line, so measured validation losses sit somewhat above the floor.
//
// Errors are InputError: field "task" (unknown task), "n_chars", "text" (too little data for the
// split or a batch), "block_size", "batch_size".
// Limits: kMinTaskChars ≤ n_chars ≤ kMaxTaskChars; B·T ≤ kMaxBatchTokens per batch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/base/rng.h"

namespace ap {

constexpr long long kDefaultTaskChars = 100000;
constexpr long long kMinTaskChars = 256;
constexpr long long kMaxTaskChars = 1LL << 24;  // 16,777,216 characters (16 MiB of text)
constexpr long long kMaxBatchTokens = 1LL << 24;

struct TaskInfo {
  std::string name;         // "copy", as generate_task_text takes it
  std::string description;  // one line in English
  std::string example;      // one line of the task, without its '\n'
  std::string attention;    // what a head that has learned the task should show
  std::string alphabet;     // every character the task uses, sorted ('\n' first): the vocabulary
                            // (CharTokenizer::from_text(alphabet) is the task's tokenizer, the same
                            // whatever the seed and length of the text)
  double loss_floor;        // nats per character of a perfect model (see data.cpp)
};

// The built-in tasks, in a fixed order: copy, reverse, sort, induction, sums, grammar.
const std::vector<TaskInfo>& task_infos();
// One task's info. Throws InputError (field "task") naming the known tasks.
const TaskInfo& task_info(const std::string& name);

// Whole lines of the task, as many as fit in n_chars characters (so the text has at most n_chars
// characters and at least n_chars − 80). Throws InputError for an unknown task (field "task") or
// n_chars outside [kMinTaskChars, kMaxTaskChars] (field "n_chars").
std::string generate_task_text(const std::string& name, uint64_t seed, long long n_chars = kDefaultTaskChars);

// ---------------------------------------------------------------- train / validation split

struct Dataset {
  std::vector<int> train, val;
};

// val = the last max(⌊n/10⌋, block_size + 1) tokens, train = the rest; both hold at least one
// window of block_size + 1 tokens. Errors (field "text"): no tokens; fewer than block_size + 1
// ("the text has 40 characters; a block_size of 64 needs at least 65"); fewer than
// 2·(block_size + 1), too few for both splits. block_size < 1: field "block_size".
Dataset split_dataset(const std::vector<int>& tokens, int block_size);

// ---------------------------------------------------------------- batches

// nanoGPT's get_batch: B windows at random offsets o uniform in [0, n − T), inputs (B,T) =
// data[o, o+T), targets (B,T) = data[o+1, o+T+1). Writes into the caller's buffers (no allocation).
// The offsets come from an Rng stream derived from `seed`, so the same seed gives the same batches;
// state()/set_state() save and restore the position in that sequence (for checkpoints).
class BatchSampler {
 public:
  explicit BatchSampler(uint64_t seed);
  // inputs, targets: B·T ints each. Throws InputError: B < 1 (field "batch_size"), T < 1 (field
  // "block_size"), B·T > kMaxBatchTokens, data shorter than T + 1 (field "text").
  void sample(int* inputs, int* targets, const std::vector<int>& data, int B, int T);
  uint64_t state() const { return rng_.state(); }
  void set_state(uint64_t state) { rng_ = Rng(state); }

 private:
  Rng rng_;
};

// Deterministic validation batches: the same windows whenever asked, so a model's validation loss
// is a function of the model alone. W = num_batches()·B windows at evenly spaced offsets
// o_i = ⌊i·(n − T − 1)/(W − 1)⌋ from the first window to the last one of the data; num_batches()
// is enough to cover the data once, ⌈⌈(n − 1)/T⌉ / B⌉, capped at max_batches (windows overlap or
// repeat when the data is short).
class ValidationBatches {
 public:
  // Throws like BatchSampler::sample, and max_batches < 1 (field "max_batches").
  ValidationBatches(const std::vector<int>& data, int B, int T, int max_batches = 16);
  int num_batches() const { return num_batches_; }
  int batch_size() const { return B_; }
  int block_size() const { return T_; }
  // The offsets of batch `index`'s windows: offsets()[index·B … index·B + B).
  const std::vector<long long>& offsets() const { return offsets_; }
  // Fills inputs, targets (B,T) for batch `index` in [0, num_batches()). `data` must be the data
  // the batches were made for (checked by its length: InputError field "text").
  void batch(int index, int* inputs, int* targets, const std::vector<int>& data) const;

 private:
  int B_, T_, num_batches_;
  size_t n_;
  std::vector<long long> offsets_;
};

}  // namespace ap

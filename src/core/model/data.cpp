// data.cpp — the built-in tasks, their loss floors, the split and the batch samplers (see data.h).
//
// Loss floors. Lines are independent, so a perfect model's mean loss per character over a long
// stream is E[H(line)] / E[length of line] (nats per character; the '\n' counts as a character):
// by the chain rule the losses of a line's characters add up to −log P(line), whose mean is the
// entropy H(line). Each generator draws a few uniform choices and writes a line from which the
// choices can be read back (the map is one-to-one), so H(line) = the sum of ln(number of options)
// over the choices made: random parts cost their entropy, determined parts (the answer after
// '=', the second half of an induction line, a verb's agreement, the '\n') cost 0.
#include "core/model/data.h"

#include <algorithm>
#include <cmath>

#include "core/base/input_error.h"

namespace ap {

namespace {

// An integer uniform in [0, n), n ≥ 1, without modulo bias: values below 2^64 mod n are redrawn.
uint64_t uniform_below(Rng& rng, uint64_t n) {
  const uint64_t threshold = (0 - n) % n;  // 2^64 mod n
  for (;;) {
    const uint64_t x = rng.next_u64();
    if (x >= threshold) return x % n;
  }
}

int draw(Rng& rng, int n) { return static_cast<int>(uniform_below(rng, static_cast<uint64_t>(n))); }

// ---------------------------------------------------------------- copy, reverse, sort

// The question: kCopyMinLen … kCopyMaxLen letters (uniform), each uniform over the first
// kCopyLetters letters a, b, … (independent, repeats allowed).
constexpr int kCopyMinLen = 3, kCopyMaxLen = 8, kCopyLetters = 10;

std::string random_letters(Rng& rng) {
  const int L = kCopyMinLen + draw(rng, kCopyMaxLen - kCopyMinLen + 1);
  std::string s(L, 'a');
  for (char& c : s) c = static_cast<char>('a' + draw(rng, kCopyLetters));
  return s;
}

void copy_line(Rng& rng, std::string& out) {
  const std::string s = random_letters(rng);
  out += s + "=" + s + "\n";
}

void reverse_line(Rng& rng, std::string& out) {
  const std::string s = random_letters(rng);
  out += s + "=" + std::string(s.rbegin(), s.rend()) + "\n";
}

void sort_line(Rng& rng, std::string& out) {
  const std::string s = random_letters(rng);
  std::string sorted = s;
  std::sort(sorted.begin(), sorted.end());
  out += s + "=" + sorted + "\n";
}

// Floor of copy, reverse and sort: the question costs ln(#lengths) for its length (the '=' ends
// it) plus ln(kCopyLetters) per letter; the answer and '\n' follow from it. A line has 2L + 2
// characters. So floor = (ln 6 + E[L]·ln 10) / (2·E[L] + 2) with E[L] = 5.5: 14.456 / 13.
double copy_floor() {
  const double n_lengths = kCopyMaxLen - kCopyMinLen + 1;
  const double mean_L = (kCopyMinLen + kCopyMaxLen) / 2.0;
  return (std::log(n_lengths) + mean_L * std::log(static_cast<double>(kCopyLetters))) / (2 * mean_L + 2);
}

// ---------------------------------------------------------------- induction

// kInductionMinLen … kInductionMaxLen distinct letters from a–z (uniform length, then a uniformly
// random ordered draw without replacement), immediately followed by the same letters, no separator.
// Distinct letters make the induction unambiguous: each letter of the second half appears once in
// the first, and the first repeated letter marks where the second half begins.
constexpr int kInductionMinLen = 8, kInductionMaxLen = 24, kInductionLetters = 26;

void induction_line(Rng& rng, std::string& out) {
  const int L = kInductionMinLen + draw(rng, kInductionMaxLen - kInductionMinLen + 1);
  char pool[kInductionLetters];
  for (int i = 0; i < kInductionLetters; ++i) pool[i] = static_cast<char>('a' + i);
  for (int i = 0; i < L; ++i) std::swap(pool[i], pool[i + draw(rng, kInductionLetters - i)]);  // partial Fisher–Yates
  const std::string s(pool, pool + L);
  out += s + s + "\n";
}

// Floor: ln(#lengths) for the length (the line's length shows it) plus, for the letters, the log of
// the number of ordered draws, ln(26·25·…·(26 − L + 1)); the second half and '\n' cost 0. A line
// has 2L + 1 characters: floor = (ln 17 + E[Σ_{i<L} ln(26 − i)]) / (2·E[L] + 1).
double induction_floor() {
  const int n_lengths = kInductionMaxLen - kInductionMinLen + 1;
  double h_letters = 0, mean_L = 0;
  for (int L = kInductionMinLen; L <= kInductionMaxLen; ++L) {
    double h = 0;
    for (int i = 0; i < L; ++i) h += std::log(static_cast<double>(kInductionLetters - i));
    h_letters += h / n_lengths;
    mean_L += static_cast<double>(L) / n_lengths;
  }
  return (std::log(static_cast<double>(n_lengths)) + h_letters) / (2 * mean_L + 1);
}

// ---------------------------------------------------------------- sums

constexpr int kSumsOperands = 100;  // each operand uniform in 0 … 99

void sums_line(Rng& rng, std::string& out) {
  const int a = draw(rng, kSumsOperands), b = draw(rng, kSumsOperands);
  out += std::to_string(a) + "+" + std::to_string(b) + "=" + std::to_string(a + b) + "\n";
}

// Floor: the operands cost ln 100 each (their digits and the '+' and '=' that end them spell out a
// number of 0 … 99); the sum and '\n' follow. The mean length, 9.2895 characters, is counted over
// all 100 × 100 pairs: floor = 2·ln 100 / E[len].
double sums_floor() {
  double mean_len = 0;
  for (int a = 0; a < kSumsOperands; ++a)
    for (int b = 0; b < kSumsOperands; ++b) {
      const std::string line = std::to_string(a) + "+" + std::to_string(b) + "=" + std::to_string(a + b) + "\n";
      mean_len += static_cast<double>(line.size()) / (kSumsOperands * kSumsOperands);
    }
  return 2 * std::log(static_cast<double>(kSumsOperands)) / mean_len;
}

// ---------------------------------------------------------------- grammar

// sentence := NP [ "that" VERB NP ] VERB NP "."
//   NP   := DET [ADJ] NOUN, its number (singular or plural) drawn first; DET agrees with it
//   VERB := a verb agreeing in number with the sentence's subject (the first NP), in the relative
//           clause too ("the cats that see a dog like the bird.")
// Every choice is uniform: number 1/2, determiner 1/2, adjective 1/4 (none or one of 3), noun 1/4,
// relative clause 1/2, verb 1/3. Words are separated by one space.
const char* const kDetSingular[] = {"the", "a"};
const char* const kDetPlural[] = {"the", "some"};
const char* const kAdjectives[] = {"", "big", "small", "red"};  // "" = no adjective
const char* const kNouns[] = {"cat", "dog", "bird", "frog"};     // plural: + "s"
const char* const kVerbs[] = {"see", "like", "chase"};           // singular: + "s"
constexpr int kNumDet = 2, kNumAdj = 4, kNumNouns = 4, kNumVerbs = 3;

void noun_phrase(Rng& rng, std::string& out, bool& plural) {
  plural = draw(rng, 2) == 1;
  out += (plural ? kDetPlural : kDetSingular)[draw(rng, kNumDet)];
  out += ' ';
  const char* adj = kAdjectives[draw(rng, kNumAdj)];
  if (*adj) out += std::string(adj) + " ";
  out += kNouns[draw(rng, kNumNouns)];
  if (plural) out += 's';
}

void verb(Rng& rng, std::string& out, bool plural_subject) {
  out += kVerbs[draw(rng, kNumVerbs)];
  if (!plural_subject) out += 's';
}

void grammar_line(Rng& rng, std::string& out) {
  bool subject_plural = false, object_plural = false;
  noun_phrase(rng, out, subject_plural);
  out += ' ';
  if (draw(rng, 2) == 1) {
    out += "that ";
    verb(rng, out, subject_plural);
    out += ' ';
    noun_phrase(rng, out, object_plural);
    out += ' ';
  }
  verb(rng, out, subject_plural);
  out += ' ';
  noun_phrase(rng, out, object_plural);
  out += ".\n";
}

double mean_length(const char* const* words, int n, double suffix_chars) {
  double sum = 0;
  for (int i = 0; i < n; ++i) sum += std::string(words[i]).size();
  return sum / n + suffix_chars;
}

// Floor. Entropy: an NP costs ln 2 + ln 2 + ln 4 + ln 4 = ln 64 (number, determiner, adjective,
// noun); a sentence costs ln 64 (subject) + ln 2 (clause or not) + ½·(ln 3 + ln 64) (the clause's
// verb and object) + ln 3 (verb) + ln 64 (object); verb endings, "that", spaces, "." and '\n' cost
// 0. Mean length by linearity of expectation, from the word lists: an NP is E[det] + 1 + E[adj
// with its space] + E[noun] + ½ (the plural s); a sentence is NP + 1 + ½·(5 + VERB + 1 + NP + 1)
// + VERB + 1 + NP + 2, with VERB = E[verb] + ½ (the singular s). 12.738 nats over 42.375 characters.
double grammar_floor() {
  const double det = (mean_length(kDetSingular, kNumDet, 0) + mean_length(kDetPlural, kNumDet, 0)) / 2;
  double adj = 0;
  for (const char* a : kAdjectives) adj += (*a ? std::string(a).size() + 1.0 : 0.0) / kNumAdj;
  const double np = det + 1 + adj + mean_length(kNouns, kNumNouns, 0.5);
  const double vb = mean_length(kVerbs, kNumVerbs, 0.5);
  const double mean_len = np + 1 + 0.5 * (5 + vb + 1 + np + 1) + vb + 1 + np + 2;
  const double h_np = std::log(2.0) + std::log(static_cast<double>(kNumDet)) + std::log(static_cast<double>(kNumAdj)) +
                      std::log(static_cast<double>(kNumNouns));
  const double h_verb = std::log(static_cast<double>(kNumVerbs));
  const double h = h_np + std::log(2.0) + 0.5 * (h_verb + h_np) + h_verb + h_np;
  return h / mean_len;
}

// ---------------------------------------------------------------- the task table

using LineFn = void (*)(Rng&, std::string&);

struct Task {
  TaskInfo info;
  LineFn line;
  uint64_t stream;  // derive_seed(seed, stream): each task its own stream of the seed
};

std::string sorted_alphabet(const std::string& chars) {
  std::string s = chars;
  std::sort(s.begin(), s.end());
  s.erase(std::unique(s.begin(), s.end()), s.end());
  return s;
}

// copy, reverse and sort: a random string of 3–8 letters a–j, '=', then `then` — one alphabet, one
// loss floor (the string's length and letters are all there is to predict).
Task string_task(const char* name, const char* then, const char* example, const char* attention, LineFn line,
                 uint64_t stream) {
  return {{name, std::string("a random string of 3–8 letters a–j, '=', then ") + then, example, attention,
           sorted_alphabet("abcdefghij=\n"), copy_floor()},
          line, stream};
}

const std::vector<Task>& tasks() {
  static const std::vector<Task> all = [] {
    const std::string a_to_z = "abcdefghijklmnopqrstuvwxyz";
    std::string grammar_chars = " .\nsthat";  // separators, the plural/singular s, "that"
    for (const char* w : kDetSingular) grammar_chars += w;
    for (const char* w : kDetPlural) grammar_chars += w;
    for (const char* w : kAdjectives) grammar_chars += w;
    for (const char* w : kNouns) grammar_chars += w;
    for (const char* w : kVerbs) grammar_chars += w;
    std::vector<Task> t = {
        string_task("copy", "the same string again", "cabej=cabej",
                    "from '=' on, each position attends to the character it is about to write, L positions back "
                    "(L the string's length): a diagonal stripe",
                    copy_line, 1),
        string_task("reverse", "the string reversed", "cabej=jebac",
                    "from '=' on, each position attends to the character it is about to write, which walks "
                    "backwards through the string: an anti-diagonal",
                    reverse_line, 2),
        string_task("sort", "its letters in alphabetical order", "cabej=abcej",
                    "from '=' on, each position attends to the smallest letter of the string not yet written, "
                    "wherever it stands: a pattern that jumps around the string",
                    sort_line, 3),
        {{"induction", "8–24 distinct random letters a–z, then the same letters again (no separator)",
          "qwhzbkmfa" "qwhzbkmfa",
          "in the second half each position attends to the position just after the earlier occurrence of its own "
          "letter (an induction head; a previous-token head in the layer below makes it possible): a stripe at "
          "distance L − 1, where L is the string's length",
          sorted_alphabet(a_to_z + "\n"), induction_floor()},
         induction_line, 4},
        {{"sums", "two numbers from 0 to 99 and their sum", "12+34=46",
          "the sum's digits attend to the operands' digits of the same place value (and of the place below, for "
          "the carry)",
          sorted_alphabet("0123456789+=\n"), sums_floor()},
         sums_line, 5},
        {{"grammar",
          "a tiny English: the cat sees a dog. The verb agrees in number with the subject, even across a relative "
          "clause",
          "some big frogs that chase the dog like a red cat.",
          "the verb attends back to the subject's noun (its final s or not decides sees or see), past an adjective "
          "and past a relative clause whose own noun may have the other number",
          sorted_alphabet(grammar_chars), grammar_floor()},
         grammar_line, 6},
    };
    return t;
  }();
  return all;
}

const Task& find_task(const std::string& name) {
  for (const Task& t : tasks())
    if (t.info.name == name) return t;
  std::string list;
  for (const Task& t : tasks()) list += (list.empty() ? "" : ", ") + t.info.name;
  throw InputError("unknown task \"" + name.substr(0, 40) + "\": the built-in tasks are " + list, "task");
}

}  // namespace

const std::vector<TaskInfo>& task_infos() {
  static const std::vector<TaskInfo> infos = [] {
    std::vector<TaskInfo> v;
    for (const Task& t : tasks()) v.push_back(t.info);
    return v;
  }();
  return infos;
}

const TaskInfo& task_info(const std::string& name) {
  const std::vector<TaskInfo>& infos = task_infos();
  return infos[static_cast<size_t>(&find_task(name) - tasks().data())];
}

std::string generate_task_text(const std::string& name, uint64_t seed, long long n_chars) {
  const Task& task = find_task(name);
  if (n_chars < kMinTaskChars || n_chars > kMaxTaskChars)
    throw InputError("n_chars must be between " + std::to_string(kMinTaskChars) + " and " +
                         std::to_string(kMaxTaskChars) + ", got " + std::to_string(n_chars),
                     "n_chars");
  Rng rng(derive_seed(seed, task.stream));
  std::string text, line;
  text.reserve(static_cast<size_t>(n_chars));
  for (;;) {
    line.clear();
    task.line(rng, line);
    if (static_cast<long long>(text.size() + line.size()) > n_chars) break;
    text += line;
  }
  return text;
}

// ---------------------------------------------------------------- split

Dataset split_dataset(const std::vector<int>& tokens, int block_size) {
  if (block_size < 1)
    throw InputError("block_size must be at least 1, got " + std::to_string(block_size), "block_size");
  const long long n = static_cast<long long>(tokens.size());
  const long long window = static_cast<long long>(block_size) + 1;
  if (n == 0) throw InputError("the text is empty", "text");
  if (n < window)
    throw InputError("the text has " + std::to_string(n) + " characters; a block_size of " +
                         std::to_string(block_size) + " needs at least " + std::to_string(window),
                     "text");
  if (n < 2 * window)
    throw InputError("the text has " + std::to_string(n) + " characters, too few for both a training and a "
                         "validation split: a block_size of " + std::to_string(block_size) + " needs at least " +
                         std::to_string(2 * window) + " (block_size + 1 for each)",
                     "text");
  const long long n_val = std::max(n / 10, window);
  Dataset d;
  d.train.assign(tokens.begin(), tokens.end() - n_val);
  d.val.assign(tokens.end() - n_val, tokens.end());
  return d;
}

// ---------------------------------------------------------------- batches

namespace {

// The batch sampler's stream of a seed ("batch" in ASCII), apart from the streams that initialise
// weights or generate task text from the same seed.
constexpr uint64_t kBatchStream = 0x6261746368ull;

void check_batch(size_t n, int B, int T) {
  if (B < 1) throw InputError("batch_size must be at least 1, got " + std::to_string(B), "batch_size");
  if (T < 1) throw InputError("block_size must be at least 1, got " + std::to_string(T), "block_size");
  if (static_cast<long long>(B) * T > kMaxBatchTokens)
    throw InputError("batch_size × block_size is " + std::to_string(static_cast<long long>(B) * T) +
                         ", more than the limit of " + std::to_string(kMaxBatchTokens) + " tokens per batch",
                     "batch_size");
  if (n < static_cast<size_t>(T) + 1)
    throw InputError("the data has " + std::to_string(n) + " tokens; a block_size of " + std::to_string(T) +
                         " needs at least " + std::to_string(T + 1),
                     "text");
}

void copy_window(int* inputs, int* targets, const int* data, size_t offset, int T) {
  std::copy(data + offset, data + offset + T, inputs);
  std::copy(data + offset + 1, data + offset + T + 1, targets);
}

}  // namespace

BatchSampler::BatchSampler(uint64_t seed) : rng_(derive_seed(seed, kBatchStream)) {}

void BatchSampler::sample(int* inputs, int* targets, const std::vector<int>& data, int B, int T) {
  check_batch(data.size(), B, T);
  const uint64_t n_offsets = data.size() - static_cast<size_t>(T);  // o in [0, n − T)
  for (int b = 0; b < B; ++b) {
    const size_t o = static_cast<size_t>(uniform_below(rng_, n_offsets));
    copy_window(inputs + static_cast<size_t>(b) * T, targets + static_cast<size_t>(b) * T, data.data(), o, T);
  }
}

ValidationBatches::ValidationBatches(const std::vector<int>& data, int B, int T, int max_batches)
    : B_(B), T_(T), num_batches_(0), n_(data.size()) {
  check_batch(data.size(), B, T);
  if (max_batches < 1)
    throw InputError("max_batches must be at least 1, got " + std::to_string(max_batches), "max_batches");
  const long long n = static_cast<long long>(n_);
  const long long cover = (n - 1 + T - 1) / T;  // windows of T targets that cover the data once
  num_batches_ = static_cast<int>(std::min<long long>(max_batches, std::max<long long>(1, (cover + B - 1) / B)));
  const long long W = static_cast<long long>(num_batches_) * B;
  const long long last = n - T - 1;  // the last offset whose targets fit
  offsets_.resize(static_cast<size_t>(W));
  // ⌊i·last/(W − 1)⌋ = i·q + ⌊i·r/(W − 1)⌋ with last = q·(W − 1) + r, which cannot overflow.
  const long long q = W > 1 ? last / (W - 1) : 0, r = W > 1 ? last % (W - 1) : 0;
  for (long long i = 0; i < W; ++i) offsets_[static_cast<size_t>(i)] = W == 1 ? 0 : i * q + (i * r) / (W - 1);
}

void ValidationBatches::batch(int index, int* inputs, int* targets, const std::vector<int>& data) const {
  if (index < 0 || index >= num_batches_)
    throw InputError("validation batch " + std::to_string(index) + " does not exist: there are " +
                         std::to_string(num_batches_),
                     "batch");
  if (data.size() != n_)
    throw InputError("these validation batches were made for " + std::to_string(n_) + " tokens, not " +
                         std::to_string(data.size()),
                     "text");
  for (int b = 0; b < B_; ++b)
    copy_window(inputs + static_cast<size_t>(b) * T_, targets + static_cast<size_t>(b) * T_, data.data(),
                static_cast<size_t>(offsets_[static_cast<size_t>(index) * B_ + b]), T_);
}

}  // namespace ap

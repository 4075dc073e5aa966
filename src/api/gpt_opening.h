// gpt_opening.h — the session's part that opens a model file read in slices (the calls' table's
// role "open"; the calls open_begin … open_cancel are documented in gpt_session.h, which forwards
// them here; gpt_open.cpp writes them). One GptOpening lives in each GptSession; its own state is
// the opening under way, its slice buffer and the tokenizer files given for it, and open_finish
// hands the opened model to the session as its run. Fine-tuning an opened model is the session's
// (gpt_finetune.cpp). Linked only into the modules that open models (gpt_full.h).
#pragma once

#include <memory>
#include <string>

namespace ap {

class BpeTokenizer;
class GptSession;
struct OpenState;  // an opening under way (gpt_open.cpp)

class GptOpening {
 public:
  explicit GptOpening(GptSession& s) : s_(s) {}
  std::string open_begin(const std::string& spec_json, const std::string& head, const std::string& config_json);
  std::string open_piece(double at, std::string bytes);
  std::string open_plan(const std::string& spec_json, const std::string& meta, const std::string& config_json);
  char* open_buffer() { return file_.data(); }
  size_t open_size() const { return file_.size(); }
  std::string open_feed(double n);
  std::string open_finish();
  std::string open_tokenizer(const std::string& spec_json, const std::string& first, const std::string& second);
  void open_cancel();

 private:
  GptSession& s_;
  std::string file_, file_name_;  // open_plan's slice buffer and the file's name
  std::shared_ptr<OpenState> open_;  // the opening under way
  std::shared_ptr<const BpeTokenizer> tokenizer_;  // open_tokenizer's, for open_finish
  std::string tokenizer_name_;
};

}  // namespace ap

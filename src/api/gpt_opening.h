// gpt_opening.h — the session's part that opens a model file read in slices (the calls' table's
// role "open"; the calls open_begin … open_cancel are documented in gpt_session.h, which forwards
// them here; gpt_open.cpp writes them). One GptOpening lives in each GptSession; its own state is
// the opening under way, its slice buffer and the tokenizer files given for it, and open_finish
// hands the opened model to the session as its run. A model of several files (a Hugging Face folder
// of the Llama family, or a GGUF file) goes through open_files … open_files_plan instead, then the
// same open_view / open_feed / open_finish. Fine-tuning an opened model is the
// session's (gpt_finetune.cpp). Linked only into the modules that open models (gpt_full.h).
#pragma once

#include <memory>
#include <string>

namespace ap {

class BpeTokenizer;
class GptSession;
struct OpenState;  // an opening under way (gpt_open.cpp)
struct FilesOpening;  // an opening of a folder or a GGUF file under way (gpt_open.cpp)

class GptOpening {
 public:
  explicit GptOpening(GptSession& s) : s_(s) {}
  std::string open_begin(const std::string& spec_json, const std::string& head, const std::string& config_json);
  std::string open_piece(double at, std::string bytes);
  std::string open_plan(const std::string& spec_json, const std::string& meta, const std::string& config_json);
  // Where the caller writes the next bytes: the slice buffer, or (a folder or a GGUF file being
  // read) the rest of the range being read, in the model's own buffer for it.
  char* open_buffer() { return feed_at_ ? feed_at_ : file_.data(); }
  size_t open_size() const { return feed_at_ ? feed_left_ : file_.size(); }
  std::string open_feed(double n);
  std::string open_finish();
  std::string open_tokenizer(const std::string& spec_json, const std::string& first, const std::string& second);
  void open_cancel();
  // A Llama-family model of several files (gpt_open.cpp; the calls' docs in gpt_session.h).
  std::string open_files(const std::string& spec_json, const std::string& config, const std::string& index,
                         const std::string& tokenizer, const std::string& tokenizer_config);
  std::string open_files_piece(double file, double at, std::string bytes);
  std::string open_files_plan();

 private:
  GptSession& s_;
  std::string file_, file_name_;  // open_plan's slice buffer and the file's name
  std::shared_ptr<OpenState> open_;  // the opening under way
  std::shared_ptr<const BpeTokenizer> tokenizer_;  // open_tokenizer's, for open_finish
  std::string tokenizer_name_;
  std::shared_ptr<FilesOpening> files_;  // open_files' opening under way
  char* feed_at_ = nullptr;              // open_files_plan's ranges: where the next bytes go
  size_t feed_left_ = 0;                 // and how many the range still takes
  std::string files_feed(double n);
  std::string files_finish();
};

}  // namespace ap

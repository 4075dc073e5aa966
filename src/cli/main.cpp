// main.cpp — `attention`, the native command-line face of the core's JSON API (src/api/api.h).
//
//   attention trace [FILE|-]      spec JSON → the full forward trace as JSON
//   attention backward [FILE|-]   spec JSON (+ d_out or loss) → trace, loss and every gradient
//   attention gradcheck [FILE|-]  spec JSON (+ check, eps) → analytic vs finite-difference gradients
//   attention parse [FILE|-]      matrix text → {"ok":true,"matrix":[[...]]}
//   attention mask T [BASE] [strict|inclusive]
//   attention random ROWS COLS SEED [BOUND]
//   attention softmax [FILE|-]    {"x":[[...]],"softmax":"naive"} → weights
//   attention version
// The output is exactly what the wasm module returns for the same input (one line of JSON).
// Exit status: 0 when the result is {"ok":true,...}, 1 when it is {"ok":false,...} (the JSON
// still goes to stdout and the message also to stderr), 2 for a usage error.
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>

#include "api/api.h"
#include "formats/json.h"

namespace {

const char* kUsage =
    "usage: attention trace [FILE|-]\n"
    "       attention backward [FILE|-]\n"
    "       attention gradcheck [FILE|-]\n"
    "       attention parse [FILE|-]\n"
    "       attention softmax [FILE|-]\n"
    "       attention mask T [BASE] [strict|inclusive]\n"
    "       attention random ROWS COLS SEED [BOUND]\n"
    "       attention version\n"
    "FILE defaults to standard input. Formats: docs/api.md.\n";

bool read_input(const char* path, std::string& out) {
  if (!path || std::string(path) == "-") {
    out.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    return true;
  }
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    std::cerr << "attention: cannot read " << path << "\n";
    return false;
  }
  out.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  return true;
}

int emit(const std::string& result) {
  std::cout << result << "\n";
  if (result.rfind("{\"ok\":true", 0) == 0) return 0;
  // the message itself on stderr (read from the JSON, so quotes and backslashes are the message's)
  try {
    const ap::json::Value v = ap::json::parse(result);
    if (const ap::json::Value* e = v.find("error"); e && e->is_string()) std::cerr << "attention: " << e->as_string() << "\n";
  } catch (const std::exception&) {
    std::cerr << "attention: " << result << "\n";
  }
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string cmd = argc > 1 ? argv[1] : "";
  std::string input;
  if (cmd == "trace" || cmd == "backward" || cmd == "gradcheck" || cmd == "parse" || cmd == "softmax") {
    if (argc > 3) { std::cerr << kUsage; return 2; }
    if (!read_input(argc > 2 ? argv[2] : nullptr, input)) return 2;
    if (cmd == "trace") return emit(ap::trace_json(input));
    if (cmd == "backward") return emit(ap::backward_json(input));
    if (cmd == "gradcheck") return emit(ap::gradcheck_json(input));
    if (cmd == "parse") return emit(ap::parse_matrix_json(input));
    return emit(ap::softmax_json(input));
  }
  if (cmd == "mask" && argc >= 3 && argc <= 5) {
    std::ostringstream spec;
    spec << "{\"T\":" << argv[2] << ",\"base\":" << (argc > 3 ? argv[3] : "0") << ",\"mask\":\""
         << (argc > 4 ? argv[4] : "strict") << "\"}";
    return emit(ap::causal_mask_json(spec.str()));
  }
  if (cmd == "random" && (argc == 5 || argc == 6)) {
    std::ostringstream spec;
    spec << "{\"rows\":" << argv[2] << ",\"cols\":" << argv[3] << ",\"seed\":" << argv[4];
    if (argc == 6) spec << ",\"bound\":" << argv[5];
    spec << "}";
    return emit(ap::random_matrix_json(spec.str()));
  }
  if (cmd == "version" && argc == 2) {
    std::cout << ap::version() << "\n";
    return 0;
  }
  if (cmd == "-h" || cmd == "--help" || cmd == "help") {
    std::cout << kUsage;
    return 0;
  }
  std::cerr << kUsage;
  return 2;
}

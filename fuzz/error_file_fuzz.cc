// error_file_fuzz: the error file a worker leaves at TORCHELASTIC_ERROR_FILE
// (launch/error_file.h), and the bounded JSON parser under every reader of
// outside JSON (util/bounded_json.h), on any bytes.
//
// The worker owns the file; whatever it holds, the launcher must read it
// without throwing, keep the message within its cap and valid UTF-8 (the
// result.json writer dumps it), and never build a document nested deeper
// than util::kMaxJsonDepth.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "launch/error_file.h"
#include "util/bounded_json.h"

namespace {

using namespace dlaunch;

void check(bool condition, const char* what) {
  if (condition) return;
  std::fprintf(stderr, "error_file_fuzz: invariant broken: %s\n", what);
  std::abort();
}

// DOCUMENT's nesting of objects and arrays, counted without recursion.
int depth_of(const nlohmann::json& document) {
  int deepest = 0;
  std::vector<std::pair<const nlohmann::json*, int>> pending{{&document, 0}};
  while (!pending.empty()) {
    auto [value, depth] = pending.back();
    pending.pop_back();
    if (!value->is_structured()) continue;
    deepest = std::max(deepest, depth + 1);
    for (const auto& child : *value) pending.emplace_back(&child, depth + 1);
  }
  return deepest;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  std::string message = launch::error_file_message(text);
  check(message.size() <= launch::kMaxErrorMessageBytes + 6, "a message longer than its cap");
  (void)nlohmann::json(message).dump();  // throws, and aborts the run, on invalid UTF-8
  for (int bound : {1, 3, util::kMaxJsonDepth}) {
    std::string why;
    nlohmann::json document = util::parse_json_bounded(text, &why, bound);
    check(document.is_discarded() != why.empty(), "a reason without a refusal, or a refusal without one");
    if (!document.is_discarded()) check(depth_of(document) <= bound, "a document deeper than its bound");
  }
  return 0;
}

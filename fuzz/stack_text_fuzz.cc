// stack_text_fuzz: what a capture does with the text its tools print and
// what node 0 does with the stacks another node sends
// (forensics/stack_text.h, forensics/stack_sample.h).
//
// The first byte chooses the reader: eu-stack's output, faulthandler's
// dump, or a node's JSON list of workers. Checks that the text readers
// never throw and keep their bounds, that the JSON reader fails only with
// ProtocolError, and that what it accepts encodes and decodes again to the
// same text (encode . decode is stable), also when cut to fit a frame.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "forensics/stack_sample.h"
#include "forensics/stack_text.h"
#include "util/error.h"

namespace {

using namespace dlaunch::forensics;

void check(bool condition, const char* what) {
  if (condition) return;
  std::fprintf(stderr, "stack_text_fuzz: invariant broken: %s\n", what);
  std::abort();
}

void check_bounds(const std::vector<ThreadStack>& threads) {
  check(threads.size() <= kMaxThreadsPerWorker, "more threads than the bound");
  for (const auto& thread : threads) {
    check(thread.frames.size() <= kMaxFramesPerThread, "more frames than the bound");
    for (const auto& frame : thread.frames) {
      check(frame.function.size() <= kMaxFieldLength && frame.file.size() <= kMaxFieldLength &&
                frame.address.size() <= kMaxFieldLength,
            "a field longer than the bound");
    }
  }
}

void decode_json(std::string_view text) {
  std::vector<WorkerStacks> workers;
  try {
    workers = decode_worker_stacks(text);
  } catch (const dlaunch::util::ProtocolError&) {
    return;
  }
  std::string once = encode_worker_stacks(workers);
  std::string twice = encode_worker_stacks(decode_worker_stacks(once));
  check(once == twice, "encode . decode is not stable");
  std::string cut = encode_worker_stacks_within(workers, 4096);
  decode_worker_stacks(cut);  // a cut list still decodes
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 3) {
    case 0: check_bounds(parse_eu_stack(text, 1234)); break;
    case 1: check_bounds(parse_faulthandler(text)); break;
    default: decode_json(text); break;
  }
  return 0;
}

#include "check/gate_check.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <future>
#include <nlohmann/json.hpp>
#include <regex>
#include <unistd.h>

#include "check/link_timing.h"
#include "check/tournament.h"
#include "collective/store_secret.h"
#include "collective/communicator.h"
#include "collective/worker_identity.h"
#include "doctor/gpu_errors.h"
#include "forensics/tool_runs.h"
#include "util/environment.h"
#include "util/ports.h"
#include "util/strings.h"


namespace dlaunch::check {
namespace {

// A failure the gate can blame on certain ranks.
class GateFailure : public std::runtime_error {
 public:
  GateFailure(const std::string& message, std::vector<int> blamed)
      : std::runtime_error(message), suspects(std::move(blamed)) {}
  std::vector<int> suspects;
};

constexpr std::size_t kMaxErrorChars = 1000;
// Each node meets this many others at most (the first rounds of the
// tournament): a slow node is slow against any partner, and the gate's
// time stays a few rounds at any size, even when a slow node is in every one.
constexpr int kMostPairRounds = 8;
constexpr std::chrono::seconds kGpuQueryLimit{10};

// One line, bounded: node 0 shows it in a table.
std::string one_line(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  std::replace(text.begin(), text.end(), '\r', ' ');
  if (text.size() > kMaxErrorChars) text = text.substr(0, kMaxErrorChars) + "...";
  return text;
}

std::optional<std::int64_t> whole_number(std::string_view text) {
  if (text.empty() || text.size() > 18) return std::nullopt;
  std::int64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return value;
}

// Every rank's own slot: a rank that contributes the wrong value is named,
// and the sum of the slots is the n(n-1)/2 the correctness check expects.
void verify_allreduce(collective::Communicator& communicator, const CheckOptions& options, GateLine& line) {
  const int n = communicator.size();
  std::vector<std::int64_t> slots(static_cast<std::size_t>(n), 0);
  std::int64_t mine = communicator.rank();
  if (options.inject_wrong_rank && *options.inject_wrong_rank == communicator.rank()) mine += 1000;
  slots[static_cast<std::size_t>(communicator.rank())] = mine;
  communicator.allreduce_sum(slots.data(), slots.size());
  std::int64_t sum = 0;
  std::vector<int> wrong;
  for (int rank = 0; rank < n; ++rank) {
    sum += slots[static_cast<std::size_t>(rank)];
    if (slots[static_cast<std::size_t>(rank)] != rank) wrong.push_back(rank);
  }
  const std::int64_t expected = static_cast<std::int64_t>(n) * (n - 1) / 2;
  line.allreduce = sum == expected && wrong.empty();
  if (!line.allreduce)
    throw GateFailure(fmt::format("the all-reduce of the ranks summed {}, expected {}; wrong values came "
                                  "from rank(s) {}",
                                  sum, expected, fmt::join(wrong, ", ")),
                      wrong);
}

int partner_in(const std::vector<std::pair<int, int>>& round, int rank) {
  for (auto [a, b] : round) {
    if (a == rank) return b;
    if (b == rank) return a;
  }
  return -1;  // this rank sits the round out
}

// Everything after the group forms; throws GateFailure or SystemError.
void gate_steps(const collective::WorkerIdentity& identity, const CheckOptions& options, GateLine& line) {
  auto rounds = tournament_rounds(identity.world_size, kMostPairRounds);
  // Only the pairs the gate uses: gloo's full mesh would read N^3 x 192
  // bytes from rank 0's store (collective/pair_mesh).
  std::vector<int> partners;  // [round]; -1 when this rank sits it out
  for (const auto& round : rounds) partners.push_back(partner_in(round, identity.rank));
  auto communicator = collective::connect_gloo_pairs(identity, options.timeout, partners);
  verify_allreduce(*communicator, options, line);
  std::vector<char> payload(options.pair_bytes, 'g');
  for (std::size_t round = 0; round < rounds.size(); ++round) {
    communicator->barrier();  // every pair of the round starts together
    int peer = partners[round];
    if (peer < 0) continue;
    try {
      line.links.push_back({peer, measure_link(*communicator, payload, peer).gbps});
    } catch (const std::exception& error) {
      throw GateFailure(fmt::format("the link to rank {} failed: {}", peer, error.what()), {peer});
    }
  }
  communicator->barrier();  // rank 0 (the store) leaves only when every rank is done
}

std::optional<std::string> find_in_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return std::nullopt;
  for (const auto& folder : util::split(path, ':')) {
    if (folder.empty()) continue;
    std::string candidate = folder + "/" + program;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return std::nullopt;
}

// nvidia-smi within kGpuQueryLimit: a sick GPU can hang it.
GpuCheck check_gpus() {
  auto program = find_in_path("nvidia-smi");
  if (!program) return GpuCheck{false, {}, "", "nvidia-smi not found: GPU checks skipped"};
  forensics::ToolRequest request;
  request.argv = {*program};
  for (const auto& arg : gate_gpu_query()) request.argv.push_back(arg);
  for (char** entry = environ; *entry != nullptr; ++entry) request.environment.emplace_back(*entry);
  request.timeout = kGpuQueryLimit;
  forensics::ToolResult result;
  request.on_done = [&](const forensics::ToolResult& done) { result = done; };
  forensics::ToolRuns runs(1);
  runs.start(std::move(request));
  runs.run();
  return read_nvidia_smi(result.output, result.exit_code, result.timed_out);
}

}  // namespace

std::vector<std::string> gate_gpu_query() {
  return {"--query-gpu=index,ecc.errors.uncorrected.volatile.total,retired_pages.pending,"
          "clocks_throttle_reasons.active",
          "--format=csv,noheader"};
}

GpuCheck read_nvidia_smi(const std::string& output, int exit_code, bool timed_out) {
  GpuCheck check;
  std::string first_line = one_line(std::string(util::trim(output.substr(0, output.find('\n')))));
  if (timed_out) {
    check.note = fmt::format("nvidia-smi did not answer within {} s", kGpuQueryLimit.count());
    check.problem = check.note;
    return check;
  }
  if (exit_code != 0) {
    check.note = fmt::format("nvidia-smi failed (exit {}): {}", exit_code, first_line);
    return check;
  }
  std::vector<std::string> problems;
  for (const auto& row : util::split(output, '\n')) {
    auto fields = util::split(row, ',');
    if (fields.size() != 4) continue;
    for (auto& field : fields) field = std::string(util::trim(field));
    auto index = whole_number(fields[0]);
    if (!index) continue;
    GpuReading gpu{static_cast<int>(*index), whole_number(fields[1]), fields[2], fields[3]};
    for (auto& finding : doctor::ecc_findings(gpu.index, gpu.ecc_uncorrected, gpu.retired_pending))
      problems.push_back(std::move(finding));
    check.gpus.push_back(std::move(gpu));
  }
  check.ran = !check.gpus.empty();
  if (!check.ran) check.note = fmt::format("nvidia-smi reported no GPU: {}", first_line);
  check.problem = fmt::format("{}", fmt::join(problems, "; "));
  return check;
}

std::string gate_line_text(const GateLine& line) {
  nlohmann::ordered_json document;
  document["gate"] = 1;
  document["rank"] = line.rank;
  document["host"] = line.host;
  document["allreduce"] = line.allreduce;
  document["links"] = nlohmann::ordered_json::array();
  for (const auto& link : line.links)
    document["links"].push_back(nlohmann::ordered_json{{"peer", link.peer}, {"gbps", link.gbps}});
  document["error"] = line.error;
  if (!line.suspects.empty()) document["suspects"] = line.suspects;
  if (line.gpu.ran) {
    document["gpus"] = nlohmann::ordered_json::array();
    for (const auto& gpu : line.gpu.gpus) {
      nlohmann::ordered_json entry{{"index", gpu.index}};
      entry["ecc_uncorrected"] = gpu.ecc_uncorrected ? nlohmann::ordered_json(*gpu.ecc_uncorrected) : nullptr;
      entry["retired_pending"] = gpu.retired_pending;
      entry["throttle"] = gpu.throttle;
      document["gpus"].push_back(std::move(entry));
    }
  } else {
    document["gpus"] = nullptr;
  }
  if (!line.gpu.problem.empty()) document["gpu_problem"] = line.gpu.problem;
  if (!line.gpu.note.empty()) document["gpu_note"] = line.gpu.note;
  // Host names and errors come from outside: never let bad UTF-8 lose the line.
  return document.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

std::vector<int> suspects_in(const std::string& message, int world_size) {
  std::vector<int> suspects;
  auto add = [&](std::int64_t rank) {
    if (rank >= 0 && rank < world_size && std::find(suspects.begin(), suspects.end(), rank) == suspects.end())
      suspects.push_back(static_cast<int>(rank));
  };
  std::smatch match;
  static const std::regex absent(R"(rank\(s\) ([0-9, ]+) did not arrive)");
  static const std::regex store(R"(the store of rank 0 )");
  static const std::regex key(R"(waiting for '(?:[^']*/)?(arrival/outcome|arrival/([0-9]+)|rank_([0-9]+)|([0-9]+)/[0-9]+)')");
  if (std::regex_search(message, match, absent)) {
    for (const auto& rank : util::split(match[1].str(), ','))
      if (auto number = whole_number(util::trim(rank))) add(*number);
  } else if (std::regex_search(message, match, key)) {
    if (match[1] == "arrival/outcome") add(0);  // rank 0 owes the verdict on arrivals
    for (int group = 2; group <= 4; ++group)
      if (match[group].matched) add(whole_number(match[group].str()).value_or(-1));
  } else if (std::regex_search(message, match, store)) {
    add(0);
  }
  return suspects;
}

GateLine run_gate_rank(const collective::WorkerIdentity& identity, const CheckOptions& options) {
  GateLine line;
  line.rank = identity.rank;
  line.host = identity.host;
  // nvidia-smi takes a while; it runs while the ranks meet and measure.
  auto gpus = std::async(std::launch::async, check_gpus);
  try {
    gate_steps(identity, options, line);
  } catch (const GateFailure& failure) {
    line.error = one_line(failure.what());
    line.suspects = failure.suspects;
  } catch (const std::exception& error) {
    line.error = one_line(error.what());
    line.suspects = suspects_in(line.error, identity.world_size);
  }
  try {
    line.gpu = gpus.get();
  } catch (const std::exception& error) {
    line.gpu.note = one_line(fmt::format("the GPU check failed: {}", error.what()));
  }
  return line;
}

int run_gate(const CheckOptions& options) {
  GateLine line;
  try {
    auto identity = collective::read_worker_identity(util::Environment::from_process());
    identity.store_secret = collective::take_store_secret();
    line = run_gate_rank(identity, options);
  } catch (const std::exception& error) {  // no identity: the line says why
    line.host = util::local_host_name();
    line.error = one_line(error.what());
  }
  if (!line.error.empty())
    fmt::print(stderr, "dlaunch check --gate: rank {} on {}: {}\n", line.rank, line.host, line.error);
  std::fflush(stderr);
  fmt::print("{}\n", gate_line_text(line));
  std::fflush(stdout);
  return line.error.empty() ? 0 : 1;
}

}  // namespace dlaunch::check

#include "check/bandwidth_sweep.h"

#include <algorithm>
#include <chrono>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace dlaunch::check {
namespace {

// Fills with rank+1, so the sum is n(n+1)/2 everywhere: exact in float32
// for any group size this tool will see.
void fill(std::vector<float>& data, int rank) {
  std::fill(data.begin(), data.end(), static_cast<float>(rank + 1));
}

SweepRow measure(collective::Communicator& communicator, const CheckOptions& options,
                 std::uint64_t bytes) {
  SweepRow row;
  row.bytes = bytes;
  row.count = bytes / sizeof(float);
  std::vector<float> data(row.count);
  fill(data, communicator.rank());
  for (int i = 0; i < options.warmup; ++i) communicator.allreduce_sum(data.data(), data.size());
  communicator.barrier();
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < options.iters; ++i) communicator.allreduce_sum(data.data(), data.size());
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  row.time_us = seconds * 1e6 / options.iters;
  row.algbw = static_cast<double>(bytes) / (row.time_us * 1e-6) / 1e9;
  row.busbw = bus_bandwidth(row.algbw, communicator.size());

  // One more, verified run (timed runs reuse the buffer, so their values grow).
  fill(data, communicator.rank());
  communicator.allreduce_sum(data.data(), data.size());
  const auto n = static_cast<float>(communicator.size());
  const float expected = n * (n + 1) / 2;
  row.wrong = std::count_if(data.begin(), data.end(), [&](float value) { return value != expected; });
  communicator.allreduce_sum(&row.wrong, 1);
  return row;
}

void print_table(const std::vector<SweepRow>& rows, int ranks, int nodes) {
  fmt::print("# dlaunch check --bench: all-reduce, float32 sum, {} ranks on {} node(s), gloo TCP (bcube up to 256 KiB, ring above)\n",
             ranks, nodes);
  fmt::print("# {:>12} {:>12} {:>6} {:>12} {:>12} {:>12} {:>8}\n", "size(B)", "count", "type",
             "time(us)", "algbw(GB/s)", "busbw(GB/s)", "#wrong");
  for (const auto& row : rows)
    fmt::print("  {:>12} {:>12} {:>6} {:>12.1f} {:>12.3f} {:>12.3f} {:>8}\n", row.bytes, row.count,
               "float", row.time_us, row.algbw, row.busbw, row.wrong);
  std::fflush(stdout);
}

void print_json(const std::vector<SweepRow>& rows, int ranks, int nodes) {
  nlohmann::json document = {{"operation", "allreduce"}, {"type", "float32"}, {"ranks", ranks},
                             {"nodes", nodes},           {"transport", "gloo-tcp"}, {"algorithm", "bcube<=256KiB,ring"}};
  document["rows"] = nlohmann::json::array();
  for (const auto& row : rows)
    document["rows"].push_back({{"size", row.bytes}, {"count", row.count}, {"type", "float"},
                                {"time_us", row.time_us}, {"algbw_gbps", row.algbw},
                                {"busbw_gbps", row.busbw}, {"wrong", row.wrong}});
  fmt::print("{}\n", document.dump());
  std::fflush(stdout);
}

}  // namespace

std::vector<std::uint64_t> sweep_sizes(std::uint64_t min_bytes, std::uint64_t max_bytes) {
  std::vector<std::uint64_t> sizes;
  for (std::uint64_t bytes = std::max<std::uint64_t>(min_bytes, 4); bytes <= max_bytes; bytes *= 2)
    sizes.push_back(bytes / sizeof(float) * sizeof(float));
  return sizes;
}

double bus_bandwidth(double algbw, int ranks) {
  return ranks <= 1 ? 0.0 : algbw * 2.0 * (ranks - 1) / ranks;
}

int run_bandwidth_sweep(collective::Communicator& communicator, const CheckOptions& options,
                        int nodes) {
  std::vector<SweepRow> rows;
  std::int64_t wrong = 0;
  for (std::uint64_t bytes : sweep_sizes(options.min_bytes, options.max_bytes)) {
    rows.push_back(measure(communicator, options, bytes));
    wrong += rows.back().wrong;
  }
  if (communicator.rank() == 0) {
    if (options.json) print_json(rows, communicator.size(), nodes);
    else print_table(rows, communicator.size(), nodes);
  }
  return wrong == 0 ? 0 : 1;
}

}  // namespace dlaunch::check

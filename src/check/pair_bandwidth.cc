#include "check/pair_bandwidth.h"

#include <algorithm>
#include <chrono>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace dlaunch::check {
namespace {

constexpr int kTimedRounds = 3;

// SENDER's view of one transfer of BYTES to RECEIVER, acknowledged by one
// byte back, so the time covers delivery and not only the local send.
double timed_transfer(collective::Communicator& communicator, std::vector<char>& payload,
                      int sender, int receiver) {
  char ack = 0;
  auto start = std::chrono::steady_clock::now();
  if (communicator.rank() == sender) {
    communicator.send(payload.data(), payload.size(), receiver);
    communicator.recv(&ack, 1, receiver);
  } else if (communicator.rank() == receiver) {
    communicator.recv(payload.data(), payload.size(), sender);
    communicator.send(&ack, 1, sender);
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void print_matrix(const PairMatrix& matrix, const PairVerdict& verdict, std::uint64_t bytes) {
  std::size_t width = 8;
  for (const auto& host : matrix.hosts) width = std::max(width, host.size() + 1);
  fmt::print("# dlaunch check --pairs: node-to-node bandwidth (GB/s), {} byte messages, row sends "
             "to column\n",
             bytes);
  fmt::print("  {:<{}}", "", width);
  for (const auto& host : matrix.hosts) fmt::print("{:>{}}", host, width);
  fmt::print("\n");
  for (std::size_t from = 0; from < matrix.hosts.size(); ++from) {
    fmt::print("  {:<{}}", matrix.hosts[from], width);
    for (std::size_t to = 0; to < matrix.hosts.size(); ++to) {
      if (from == to) fmt::print("{:>{}}", "-", width);
      else fmt::print("{:>{}.3f}", matrix.gbps[from][to], width);
    }
    bool flagged = verdict.slowest_node_is_outlier && matrix.hosts[from] == verdict.slowest_node;
    fmt::print("{}\n", flagged ? "   <-- slow" : "");
  }
  if (matrix.hosts.size() < 2) {
    fmt::print("# only one node: no links to measure\n");
    return;
  }
  fmt::print("# slowest link: {} -> {} at {:.3f} GB/s (median link {:.3f} GB/s)\n",
             verdict.slowest_from, verdict.slowest_to, verdict.slowest_gbps, verdict.median_gbps);
  fmt::print("# slowest node: {} (its links average {:.3f} GB/s){}\n", verdict.slowest_node,
             verdict.slowest_node_gbps,
             verdict.slowest_node_is_outlier
                 ? " <-- under half the speed of the links without it: check its network"
                 : "");
  std::fflush(stdout);
}

void print_json(const PairMatrix& matrix, const PairVerdict& verdict, std::uint64_t bytes) {
  nlohmann::json document = {{"bytes", bytes}, {"hosts", matrix.hosts}, {"gbps", matrix.gbps}};
  document["slowest_link"] = {{"from", verdict.slowest_from}, {"to", verdict.slowest_to},
                              {"gbps", verdict.slowest_gbps}};
  document["slowest_node"] = {{"host", verdict.slowest_node},
                              {"gbps", verdict.slowest_node_gbps},
                              {"outlier", verdict.slowest_node_is_outlier}};
  document["median_gbps"] = verdict.median_gbps;
  fmt::print("{}\n", document.dump());
  std::fflush(stdout);
}

}  // namespace

PairVerdict judge_pairs(const PairMatrix& matrix) {
  PairVerdict verdict;
  const std::size_t nodes = matrix.hosts.size();
  if (nodes < 2) return verdict;
  std::vector<double> links;
  verdict.slowest_gbps = -1;
  for (std::size_t from = 0; from < nodes; ++from) {
    for (std::size_t to = 0; to < nodes; ++to) {
      if (from == to) continue;
      double value = matrix.gbps[from][to];
      links.push_back(value);
      if (verdict.slowest_gbps < 0 || value < verdict.slowest_gbps) {
        verdict.slowest_gbps = value;
        verdict.slowest_from = matrix.hosts[from];
        verdict.slowest_to = matrix.hosts[to];
      }
    }
  }
  std::sort(links.begin(), links.end());
  verdict.median_gbps = links[links.size() / 2];
  verdict.slowest_node_gbps = -1;
  for (std::size_t node = 0; node < nodes; ++node) {
    double sum = 0;
    for (std::size_t other = 0; other < nodes; ++other) {
      if (other != node) sum += matrix.gbps[node][other] + matrix.gbps[other][node];
    }
    double mean = sum / (2.0 * static_cast<double>(nodes - 1));
    if (verdict.slowest_node_gbps < 0 || mean < verdict.slowest_node_gbps) {
      verdict.slowest_node_gbps = mean;
      verdict.slowest_node = matrix.hosts[node];
    }
  }
  // A bad node drags down every link it is part of, which with few nodes is
  // most links; so it is judged against the links that do not touch it.
  double others = 0;
  int other_links = 0;
  for (std::size_t from = 0; from < nodes; ++from) {
    for (std::size_t to = 0; to < nodes; ++to) {
      if (from == to || matrix.hosts[from] == verdict.slowest_node ||
          matrix.hosts[to] == verdict.slowest_node)
        continue;
      others += matrix.gbps[from][to];
      ++other_links;
    }
  }
  verdict.slowest_node_is_outlier =
      other_links > 0 && verdict.slowest_node_gbps < 0.5 * (others / other_links);
  return verdict;
}

int run_pair_bandwidth(collective::Communicator& communicator, const CheckOptions& options,
                       const GroupLayout& layout) {
  const std::size_t nodes = layout.hosts.size();
  std::vector<char> payload(options.pair_bytes, 'x');
  std::vector<float> cells(nodes * nodes, 0.0f);
  for (std::size_t from = 0; from < nodes; ++from) {
    for (std::size_t to = 0; to < nodes; ++to) {
      if (from == to) continue;
      int sender = layout.first_rank_of_host.at(layout.hosts[from]);
      int receiver = layout.first_rank_of_host.at(layout.hosts[to]);
      timed_transfer(communicator, payload, sender, receiver);  // warm-up: connections, caches
      double seconds = 0;
      for (int round = 0; round < kTimedRounds; ++round)
        seconds += timed_transfer(communicator, payload, sender, receiver);
      if (communicator.rank() == sender)
        cells[from * nodes + to] =
            static_cast<float>(static_cast<double>(options.pair_bytes) * kTimedRounds / seconds / 1e9);
      communicator.barrier();  // one link at a time
    }
  }
  communicator.allreduce_sum(cells.data(), cells.size());
  if (communicator.rank() != 0) return 0;
  PairMatrix matrix;
  matrix.hosts = layout.hosts;
  matrix.gbps.assign(nodes, std::vector<double>(nodes, 0.0));
  for (std::size_t from = 0; from < nodes; ++from)
    for (std::size_t to = 0; to < nodes; ++to) matrix.gbps[from][to] = cells[from * nodes + to];
  PairVerdict verdict = judge_pairs(matrix);
  if (options.json) print_json(matrix, verdict, options.pair_bytes);
  else print_matrix(matrix, verdict, options.pair_bytes);
  return 0;
}

}  // namespace dlaunch::check

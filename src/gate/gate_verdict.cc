#include "gate/gate_verdict.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>
#include <optional>
#include <set>

#include "util/bounded_json.h"

namespace dlaunch::rendezvous {
namespace {

// A text from another machine, shown in one line of a report.
constexpr std::size_t kMaxShownChars = 300;
// Beyond any link: a figure above it is not a measurement.
constexpr double kMaxGbps = 1e6;

std::string shown(std::string text) {
  for (char& c : text) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  if (text.size() > kMaxShownChars) text = text.substr(0, kMaxShownChars) + "...";
  return text;
}

// One node's line, read and checked against its gate rank.
struct GateLine {
  bool valid = false;
  std::string invalid;  // why the line cannot be used
  bool allreduce = false;
  std::vector<std::pair<int, double>> links;  // peer, Gb/s of this end's sends
  std::string error;
  std::vector<int> suspects;
  std::string gpu_problem;
  std::string gpu_note;
};

std::string text_field(const nlohmann::json& document, const char* name) {
  auto field = document.find(name);
  if (field == document.end() || !field->is_string()) return "";
  return shown(field->get<std::string>());
}

// Throws std::invalid_argument naming what is wrong.
void read_links(const nlohmann::json& links, int rank, int size, GateLine& line) {
  if (!links.is_array() || links.size() > static_cast<std::size_t>(size))
    throw std::invalid_argument("\"links\" is not an array of at most one entry per peer");
  for (const auto& link : links) {
    if (!link.is_object() || !link.contains("peer") || !link.contains("gbps") ||
        !link["peer"].is_number_integer() || !link["gbps"].is_number())
      throw std::invalid_argument("a link without an integer \"peer\" and a number \"gbps\"");
    auto peer = link["peer"].get<std::int64_t>();
    double gbps = link["gbps"].get<double>();
    if (peer < 0 || peer >= size || peer == rank)
      throw std::invalid_argument(fmt::format("a link to peer {}, not another rank of {}", peer, size));
    if (!std::isfinite(gbps) || gbps < 0 || gbps > kMaxGbps)
      throw std::invalid_argument(fmt::format("a link at {} Gb/s", gbps));
    line.links.emplace_back(static_cast<int>(peer), gbps);
  }
}

GateLine read_line(const std::string& text, int rank, int size) {
  GateLine line;
  if (text.size() > kMaxGateLineBytes) {
    line.invalid = fmt::format("its gate line is too long ({} bytes, at most {})", text.size(), kMaxGateLineBytes);
    return line;
  }
  // Bounded: a line from another machine nested 256 KiB deep overflowed
  // the stack when value() below copied it.
  std::string why;
  auto document = util::parse_json_bounded(text, &why);
  if (document.is_discarded() || !document.is_object() || document.value("gate", nlohmann::json()) != 1) {
    line.invalid = fmt::format("its gate line is not the gate's JSON: '{}'", shown(text.substr(0, 80)));
    if (!why.empty()) line.invalid += fmt::format(" ({})", shown(why));
    return line;
  }
  try {
    if (!document.contains("rank") || !document["rank"].is_number_integer() ||
        document["rank"].get<std::int64_t>() != rank)
      throw std::invalid_argument(fmt::format("it is not for gate rank {}", rank));
    if (!document.contains("allreduce") || !document["allreduce"].is_boolean())
      throw std::invalid_argument("\"allreduce\" is not true or false");
    line.allreduce = document["allreduce"].get<bool>();
    read_links(document.value("links", nlohmann::json::array()), rank, size, line);
    if (!document.contains("error") || !document["error"].is_string())
      throw std::invalid_argument("\"error\" is not a string");
    line.error = text_field(document, "error");
    auto suspects = document.value("suspects", nlohmann::json::array());
    if (suspects.is_array() && suspects.size() <= static_cast<std::size_t>(size)) {
      for (const auto& suspect : suspects) {
        if (suspect.is_number_integer() && suspect.get<std::int64_t>() >= 0 && suspect.get<std::int64_t>() < size)
          line.suspects.push_back(suspect.get<int>());
      }
    }
  } catch (const std::exception& error) {
    line.links.clear();
    line.invalid = fmt::format("its gate line is malformed: {}", error.what());
    return line;
  }
  line.gpu_problem = text_field(document, "gpu_problem");
  line.gpu_note = text_field(document, "gpu_note");
  line.valid = true;
  return line;
}

double upper_median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

enum class Outcome { kPassed, kFailed, kSilent };

// One gate rank as judged so far.
struct Ranked {
  const GateNodeReport* report = nullptr;
  GateLine line;
  Outcome outcome = Outcome::kSilent;
  std::string why;  // for kFailed and kSilent
};

Ranked judge_rank(const GateNodeReport* report, int rank, int size) {
  Ranked ranked;
  ranked.report = report;
  if (report == nullptr) {
    ranked.why = "its launcher sent no gate report";
    return ranked;
  }
  if (report->reported && !report->line.empty()) ranked.line = read_line(report->line, rank, size);
  std::string launcher = shown(report->launcher_error);
  if (!ranked.line.valid) {
    if (!launcher.empty()) ranked.why = launcher;
    else if (!ranked.line.invalid.empty()) ranked.why = ranked.line.invalid;
    else ranked.why = fmt::format("its gate check ended without a line (exit code {})", report->exit_code);
    return ranked;
  }
  if (!ranked.line.error.empty()) {
    ranked.outcome = Outcome::kFailed;
    ranked.why = fmt::format("its gate check failed: {}", ranked.line.error);
  } else if (!ranked.line.allreduce) {
    ranked.outcome = Outcome::kFailed;
    ranked.why = "its gate check did not verify the all-reduce";
  } else if (report->exit_code != 0 || !launcher.empty()) {
    ranked.outcome = Outcome::kFailed;
    ranked.why = launcher.empty() ? fmt::format("its gate check exited with code {}", report->exit_code) : launcher;
  } else {
    ranked.outcome = Outcome::kPassed;
  }
  return ranked;
}

// [i][j]: the lower of both ends' positive figures; 0 when neither measured it.
std::vector<std::vector<double>> link_matrix(const std::vector<Ranked>& ranks) {
  const std::size_t size = ranks.size();
  std::vector<std::vector<double>> gbps(size, std::vector<double>(size, 0.0));
  for (std::size_t rank = 0; rank < size; ++rank) {
    for (auto [peer, figure] : ranks[rank].line.links) {
      if (figure <= 0) continue;
      double& cell = gbps[rank][static_cast<std::size_t>(peer)];
      cell = cell > 0 ? std::min(cell, figure) : figure;
    }
  }
  for (std::size_t a = 0; a < size; ++a) {
    for (std::size_t b = a + 1; b < size; ++b) {
      double x = gbps[a][b], y = gbps[b][a];
      double both = x > 0 && y > 0 ? std::min(x, y) : std::max(x, y);
      gbps[a][b] = gbps[b][a] = both;
    }
  }
  return gbps;
}

// The check failed on every node. The nodes with a line name suspects; a
// rank named by a majority of them is benched, and so is a node that ended
// without a line while others wrote one. The others failed because of them.
// Returns the gate ranks to bench, with their reasons.
std::map<int, std::string> blame_when_all_failed(const std::vector<Ranked>& ranks) {
  std::map<int, std::string> blamed;
  std::map<int, int> votes;
  int voters = 0;
  for (const auto& ranked : ranks) {
    if (ranked.outcome != Outcome::kFailed) continue;
    ++voters;
    std::set<int> named(ranked.line.suspects.begin(), ranked.line.suspects.end());
    for (int suspect : named) ++votes[suspect];
  }
  if (voters == 0) return blamed;
  for (auto [suspect, count] : votes) {
    if (2 * count > voters)
      blamed[suspect] = fmt::format("the gate's check failed on every node and {} of {} nodes blame this one",
                                    count, voters);
  }
  for (std::size_t rank = 0; rank < ranks.size(); ++rank) {
    if (ranks[rank].outcome == Outcome::kSilent) blamed[static_cast<int>(rank)] = ranks[rank].why;
  }
  for (auto& [rank, why] : blamed) {
    const auto& ranked = ranks[static_cast<std::size_t>(rank)];
    if (ranked.outcome == Outcome::kFailed) why += fmt::format(" ({})", ranked.line.error);
  }
  return blamed;
}

std::string every_node_failed(const std::vector<Ranked>& ranks) {
  std::vector<std::string> reasons;
  for (const auto& ranked : ranks) {
    if (reasons.size() == 3) {
      reasons.push_back("...");
      break;
    }
    std::string host = ranked.report ? ranked.report->host : "?";
    reasons.push_back(fmt::format("{}: {}", host, ranked.why));
  }
  return fmt::format("the gate's check failed on every node and no node can be blamed, so none is benched: {}",
                     fmt::join(reasons, "; "));
}

// "nvidia-smi not found: GPU checks skipped (node1, node2)"; one part per distinct note.
std::string gpu_notes(const std::vector<Ranked>& ranks) {
  std::vector<std::pair<std::string, std::vector<std::string>>> notes;
  for (const auto& ranked : ranks) {
    if (ranked.line.gpu_note.empty() || ranked.report == nullptr) continue;
    auto same = std::find_if(notes.begin(), notes.end(), [&](const auto& note) { return note.first == ranked.line.gpu_note; });
    if (same == notes.end()) notes.push_back({ranked.line.gpu_note, {ranked.report->host}});
    else same->second.push_back(ranked.report->host);
  }
  std::vector<std::string> parts;
  for (const auto& [note, hosts] : notes) {
    std::string where = hosts.size() == ranks.size() ? "every node" : fmt::format("{}", fmt::join(hosts, ", "));
    parts.push_back(fmt::format("{} ({})", note, where));
  }
  return fmt::format("{}", fmt::join(parts, "; "));
}

void bench(GateNodeVerdict& node, const std::string& why) {
  if (node.benched) return;  // the first reason stands
  node.benched = true;
  node.why = why;
}

}  // namespace

GateResult judge_gate(const std::vector<int>& gate_slots, const std::vector<GateNodeReport>& reports,
                      int gate_timeout_s) {
  GateResult result;
  const int size = static_cast<int>(gate_slots.size());
  std::map<int, const GateNodeReport*> by_slot;
  for (const auto& report : reports) by_slot[report.slot] = &report;
  std::vector<Ranked> ranks;
  for (int rank = 0; rank < size; ++rank) {
    auto found = by_slot.find(gate_slots[static_cast<std::size_t>(rank)]);
    ranks.push_back(judge_rank(found == by_slot.end() ? nullptr : found->second, rank, size));
    result.hosts.push_back(found == by_slot.end() ? "" : found->second->host);
  }
  result.gbps = link_matrix(ranks);

  // Every slot of the job, and those in the gate also by their rank.
  std::map<int, int> rank_of_slot;
  for (int rank = 0; rank < size; ++rank) rank_of_slot[gate_slots[static_cast<std::size_t>(rank)]] = rank;
  std::set<int> slots;
  for (const auto& report : reports) slots.insert(report.slot);
  for (int slot : gate_slots) slots.insert(slot);
  for (int slot : slots) {
    GateNodeVerdict node;
    node.slot = slot;
    if (by_slot.count(slot) > 0) node.host = by_slot[slot]->host;
    auto rank = rank_of_slot.find(slot);
    if (rank == rank_of_slot.end() || by_slot.count(slot) == 0 || !by_slot[slot]->arrived) {
      bench(node, gate_timeout_s > 0
                      ? fmt::format("did not join within --gate-timeout ({} s)", gate_timeout_s)
                      : std::string("did not join within --gate-timeout"));
    }
    if (rank != rank_of_slot.end()) {
      node.gate_rank = rank->second;
      std::vector<double> links;
      for (double figure : result.gbps[static_cast<std::size_t>(rank->second)])
        if (figure > 0) links.push_back(figure);
      node.link_gbps = upper_median(links);
    }
    result.nodes.push_back(std::move(node));
  }
  auto node_of_rank = [&](int rank) -> GateNodeVerdict& {
    return *std::find_if(result.nodes.begin(), result.nodes.end(),
                         [&](const GateNodeVerdict& node) { return node.gate_rank == rank; });
  };

  // Failures: each node's own, unless every node failed.
  bool any_passed = std::any_of(ranks.begin(), ranks.end(), [](const Ranked& r) { return r.outcome == Outcome::kPassed; });
  if (any_passed) {
    for (int rank = 0; rank < size; ++rank)
      if (ranks[static_cast<std::size_t>(rank)].outcome != Outcome::kPassed)
        bench(node_of_rank(rank), ranks[static_cast<std::size_t>(rank)].why);
  } else if (size > 0) {
    auto blamed = blame_when_all_failed(ranks);
    for (const auto& [rank, why] : blamed) bench(node_of_rank(rank), why);
    if (blamed.empty()) {
      result.problem = every_node_failed(ranks);
      for (int rank = 0; rank < size; ++rank) {
        auto& node = node_of_rank(rank);
        node.failed = true;
        node.why = ranks[static_cast<std::size_t>(rank)].why;
      }
    }
  }

  // GPUs: a problem benches the node, whatever else it passed.
  for (int rank = 0; rank < size; ++rank) {
    const auto& problem = ranks[static_cast<std::size_t>(rank)].line.gpu_problem;
    if (!problem.empty()) bench(node_of_rank(rank), fmt::format("GPU problem: {}", problem));
  }

  // Speed: among the nodes that passed the rest, each host against the
  // median of the hosts. Launchers that share a host share its NIC: the
  // spread between them is that host's scheduling, not a slower link (a
  // test runs a hundred launchers on one loaded machine), so a host's
  // figure is the upper median of its launchers'.
  std::map<std::string, std::vector<double>> links_by_host;
  auto host_key = [](const GateNodeVerdict& node) {
    return node.host.empty() ? fmt::format("#slot{}", node.slot) : node.host;  // unknown: its own
  };
  for (int rank = 0; rank < size; ++rank) {
    const auto& node = node_of_rank(rank);
    if (!node.benched && node.link_gbps > 0) links_by_host[host_key(node)].push_back(node.link_gbps);
  }
  std::map<std::string, double> host_gbps;
  std::vector<double> figures;
  for (auto& [host, links] : links_by_host) figures.push_back(host_gbps[host] = upper_median(links));
  result.median_gbps = upper_median(figures);
  for (int rank = 0; rank < size; ++rank) {
    auto& node = node_of_rank(rank);
    if (node.benched || node.link_gbps <= 0) continue;
    const double gbps = host_gbps[host_key(node)];
    if (gbps < 0.5 * result.median_gbps)
      bench(node, fmt::format("its links run at {:.2f} Gb/s, under half the median {:.2f} Gb/s", gbps,
                              result.median_gbps));
  }

  for (const auto& node : result.nodes)
    if (node.benched) result.benched_hosts.push_back(node.host);
  result.gpu_note = gpu_notes(ranks);
  return result;
}

namespace {

int passed_count(const GateResult& result) {
  return static_cast<int>(std::count_if(result.nodes.begin(), result.nodes.end(),
                                        [](const GateNodeVerdict& node) { return !node.benched && !node.failed; }));
}

const char* verdict_word(const GateNodeVerdict& node) {
  if (node.benched) return "benched";
  return node.failed ? "failed" : "passed";
}

std::string gbps_text(double gbps) { return gbps > 0 ? fmt::format("{:.2f}", gbps) : "-"; }

}  // namespace

std::string gate_summary(const GateResult& result) {
  std::string text;
  for (const auto& node : result.nodes) {
    if (node.benched) text += fmt::format("{} (slot {}) benched: {}\n", node.host, node.slot, node.why);
  }
  if (!result.problem.empty()) text += result.problem + "\n";
  text += fmt::format("{} of {} nodes passed", passed_count(result), result.nodes.size());
  if (result.median_gbps > 0) text += fmt::format(" (median link {:.2f} Gb/s)", result.median_gbps);
  text += "\n";
  if (!result.gpu_note.empty()) text += fmt::format("GPU checks: {}\n", result.gpu_note);
  return text;
}

std::string gate_report_text(const GateResult& result) {
  std::string text = fmt::format("# dlaunch gate: {} of {} nodes passed", passed_count(result), result.nodes.size());
  if (result.median_gbps > 0) text += fmt::format("; median link {:.2f} Gb/s", result.median_gbps);
  text += "\n\n";
  std::size_t width = 6;
  for (const auto& node : result.nodes) width = std::max(width, node.host.size() + 2);
  text += fmt::format("{:<6}{:<6}{:<{}}{:<9}{:>10}  {}\n", "slot", "rank", "host", width, "verdict", "link Gb/s", "why");
  for (const auto& node : result.nodes) {
    text += fmt::format("{:<6}{:<6}{:<{}}{:<9}{:>10}  {}\n", node.slot,
                        node.gate_rank >= 0 ? std::to_string(node.gate_rank) : std::string("-"), node.host, width,
                        verdict_word(node), gbps_text(node.link_gbps), node.why);
  }
  if (result.hosts.size() >= 2) {
    text += "\n# link Gb/s (the lower of both ends' figures; - unknown)\n";
    std::size_t column = 8;
    for (const auto& host : result.hosts) column = std::max(column, host.size() + 2);
    text += fmt::format("{:<{}}", "", column);
    for (const auto& host : result.hosts) text += fmt::format("{:>{}}", host, column);
    text += "\n";
    for (std::size_t from = 0; from < result.hosts.size(); ++from) {
      text += fmt::format("{:<{}}", result.hosts[from], column);
      for (std::size_t to = 0; to < result.hosts.size(); ++to)
        text += fmt::format("{:>{}}", from == to ? "-" : gbps_text(result.gbps[from][to]), column);
      text += "\n";
    }
  }
  if (!result.benched_hosts.empty()) {
    text += "\n# benched\n";
    for (const auto& node : result.nodes)
      if (node.benched) text += fmt::format("{} (slot {}): {}\n", node.host, node.slot, node.why);
  }
  if (!result.gpu_note.empty()) text += fmt::format("\n# GPU checks\n{}\n", result.gpu_note);
  if (!result.problem.empty()) text += fmt::format("\n# problem\n{}\n", result.problem);
  return text;
}

nlohmann::json gate_report_json(const GateResult& result) {
  nlohmann::json nodes = nlohmann::json::array();
  for (const auto& node : result.nodes) {
    nodes.push_back({{"slot", node.slot},
                     {"host", node.host},
                     {"gate_rank", node.gate_rank},
                     {"benched", node.benched},
                     {"failed", node.failed},
                     {"why", node.why},
                     {"link_gbps", node.link_gbps}});
  }
  return {{"nodes", nodes},
          {"hosts", result.hosts},
          {"gbps", result.gbps},
          {"median_gbps", result.median_gbps},
          {"benched_hosts", result.benched_hosts},
          {"passed", passed_count(result)},
          {"gpu_note", result.gpu_note},
          {"problem", result.problem}};
}

}  // namespace dlaunch::rendezvous

// bench/rendezvous_scale.cc: time to a complete world against the number of
// launchers, for ONE rendezvous service (rendezvous::RendezvousServer, in
// this process, on loopback, with a token as a real job has).
//
// N simulated launchers live in a few forked client processes, each driving
// its share of sockets with one epoll loop. Every simulated launcher does
// what RendezvousCoordinator (rendezvous/service_dialer.cc) does on the
// wire, with the real encoders: it connects, reads the Challenge, answers
// with a SealedJoin (its nonce and slot in clear, then its Join, which
// carries this host's interfaces and the proof join_proof(token, challenge,
// nonce, signed_part(join)), sealed under the Session the token and the two
// nonces make), checks node 0's sealed Welcome and waits for the sealed
// World, which must have N nodes of --nproc workers (a wrong world is an
// error).
//
// Then the failure broadcast, as RendezvousCoordinator and the service do it
// when a worker fails: once every launcher has its World, the launcher of
// the last slot (N - 1: never node 0's, which this benchmark simulates too,
// the service being only the in-process RendezvousServer) sends a Failure
// and then its Outcome; node 0 relays the Failure as a Stop to every other
// launcher, each answers with its Outcome (stopped), and node 0 then sends
// every launcher the Verdict. Every launcher but the reporter must get a
// Stop before its Verdict, and every Verdict must say failed, with the
// reported failure as its root (anything else is an error).
//
// Timed: the World from just before the service is constructed, the client
// processes being released at that moment through a pipe (so process
// start-up and client set-up are not timed), to the last World any client
// received; the failure broadcast from just before the Failure is sent to
// the last Verdict any client received (steady_clock is CLOCK_MONOTONIC,
// one clock for all processes).
//
// Connects are paced to a window: at most as many launchers of all the
// client processes together are connected but not yet welcomed as both the
// kernel's accept queue (the service's backlog of 4096, capped by
// net.core.somaxconn) and node 0's cap on connections that have not proved
// the token (derived from the open-file limit) hold. Beyond them the kernel
// drops SYNs (a 1 s retransmit each) and node 0 closes the oldest unproven
// connection, which a real launcher redials: --connect-window 0 connects all
// at once to see that.
//
// stdout: one tab-separated line per N (bench/rendezvous_scale formats the
// table); stderr: every run. --message-sizes prints the encoded size of
// every message of the paths instead (for the cost model).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fmt/format.h>
#include <fstream>
#include <malloc.h>
#include <memory>
#include <netinet/in.h>
#include <optional>
#include <poll.h>
#include <string>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include "net/interfaces.h"
#include "service/rendezvous_server.h"
#include "util/error.h"
#include "util/fd.h"
#include "util/socket.h"
#include "wire/protocol.h"
#include "wire/session.h"
#include "wire/token.h"
#include "wire/world.h"

namespace dlaunch::bench {
namespace {

using rendezvous::MessageType;
using std::chrono::nanoseconds;

struct Options {
  std::vector<int> sizes{64, 128, 256, 512, 1024, 2048, 4096};
  int runs = 5;
  int processes = 4;  // client processes; each drives N / processes launchers
  int nproc = 8;      // workers per simulated node: world_size must be N * nproc
  int timeout_s = 60;
  // Launchers of all client processes connected but not yet welcomed, at
  // most: -1 derives it from the kernel's and node 0's limits, 0 is no limit.
  int connect_window = -1;
  bool message_sizes = false;  // print every message's encoded size and exit
  int heartbeat_timeout_s = 0;  // the service's --heartbeat-timeout; 0: the job's default
};

Options parse_options(int argc, char** argv) {
  Options options;
  CLI::App app("Time to a complete rendezvous world against the number of launchers",
               "rendezvous_scale");
  app.add_option("--sizes", options.sizes, "launcher counts N, in order")->delimiter(',');
  app.add_option("--runs", options.runs, "timed runs per N (the median is the figure)")
      ->check(CLI::PositiveNumber);
  app.add_option("--processes", options.processes, "client processes sharing the launchers")
      ->check(CLI::PositiveNumber);
  app.add_option("--nproc", options.nproc, "workers per simulated node")->check(CLI::PositiveNumber);
  app.add_option("--timeout", options.timeout_s, "seconds one run may take before it is an error")
      ->check(CLI::PositiveNumber);
  app.add_option("--connect-window", options.connect_window,
                 "launchers connected but not yet welcomed at once, all processes together (default: "
                 "what the listen backlog and node 0's unproven-connection cap hold; 0: no limit)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--heartbeat-timeout", options.heartbeat_timeout_s,
                 "the service's --heartbeat-timeout in seconds (default: dlaunch's); its stall watch fires "
                 "when one turn of its loop takes a good part of it, which the run counts as a problem")
      ->check(CLI::PositiveNumber);
  app.add_flag("--message-sizes", options.message_sizes,
               "print the encoded size of every message of the paths at each N, and exit");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    std::exit(app.exit(error));
  }
  // Two at least: the failure is reported by a launcher that is not node 0's.
  for (int n : options.sizes)
    if (n < 2 || n > 65536) throw util::InputError(fmt::format("--sizes: {} is not in 2..65536", n));
  return options;
}

std::int64_t now_ns() {
  return std::chrono::duration_cast<nanoseconds>(util::Clock::now().time_since_epoch()).count();
}

std::int64_t process_cpu_ns(int who) {
  rusage usage{};
  ::getrusage(who, &usage);
  auto ns = [](const timeval& time) {
    return static_cast<std::int64_t>(time.tv_sec) * 1'000'000'000 + time.tv_usec * 1000;
  };
  return ns(usage.ru_utime) + ns(usage.ru_stime);
}

// ---------------------------------------------------------------------------
// Descriptors and kernel limits. The service holds one socket per launcher
// and the client processes one each too, so N = 16384 needs well over the
// usual soft limit of 1024 descriptors.

// What node 0's service keeps for itself beyond its launchers
// (kReservedDescriptors in service/rendezvous_server.cc), and the listen
// backlog util/socket.cc asks for.
constexpr long kServiceReserved = 256;
constexpr long kListenBacklog = 4096;

// Raises RLIMIT_NOFILE to the hard limit; the limit now. Throws InputError
// naming the limit and what to do when the hard limit is below what N needs.
long raise_descriptor_limit(int largest_n, int processes) {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) throw util::system_error("cannot read RLIMIT_NOFILE", errno);
  limit.rlim_cur = limit.rlim_max;
  if (::setrlimit(RLIMIT_NOFILE, &limit) != 0) throw util::system_error("cannot raise RLIMIT_NOFILE", errno);
  // The service's process: N sockets, the listener, what node 0 keeps for
  // itself, pipes and stdio; each client process: its share of N.
  auto needed = static_cast<rlim_t>(largest_n + kServiceReserved + 64);
  if (limit.rlim_max != RLIM_INFINITY && limit.rlim_max < needed)
    throw util::InputError(fmt::format(
        "the hard limit on open files (RLIMIT_NOFILE, `ulimit -Hn`) is {}, but N = {} needs at "
        "least {} (one socket per launcher in the service's process, {} more node 0 keeps for "
        "itself; {} client processes share the launchers' sockets); raise it as root "
        "(`ulimit -Hn {}` in the shell that runs the benchmark, or LimitNOFILE= / limits.conf) or "
        "pass smaller --sizes",
        limit.rlim_max, largest_n, needed, kServiceReserved, processes, needed));
  return limit.rlim_max == RLIM_INFINITY ? 1L << 20 : static_cast<long>(limit.rlim_max);
}

std::optional<long> read_long_file(const char* path) {
  std::ifstream file(path);
  long value = 0;
  if (file >> value) return value;
  return std::nullopt;
}

// The accept queue: the service's backlog, capped by net.core.somaxconn.
long accept_queue() {
  return std::min(kListenBacklog, read_long_file("/proc/sys/net/core/somaxconn").value_or(kListenBacklog));
}

// How many unproven connections node 0 holds with OPEN_FILES descriptors
// and N launchers (unproven_capacity in service/rendezvous_server.cc).
long unproven_capacity(long open_files, int n) {
  long room = std::max(0L, open_files - kServiceReserved - n);
  return std::clamp(room / 2, 16L, 16384L);
}

// The launchers of all client processes that may be connected but not yet
// welcomed at once: what both the accept queue and node 0's unproven cap
// hold (0: no limit).
long connect_window(const Options& options, long open_files, int n) {
  if (options.connect_window >= 0) return options.connect_window;
  return std::min(accept_queue(), unproven_capacity(open_files, n));
}

// Limits that would not fail the run but would distort it.
void warn_about_kernel_limits(const Options& options, long open_files) {
  int largest = *std::max_element(options.sizes.begin(), options.sizes.end());
  long queue = accept_queue();
  long unproven = unproven_capacity(open_files, largest);
  if (largest > std::min(queue, unproven))
    fmt::print(stderr,
               "note: at N = {} the accept queue (backlog {}, net.core.somaxconn {}) holds {} and node 0 "
               "holds {} unproven connections (open-file limit {}): all-at-once connects would cost "
               "dropped SYNs (1 s retransmits) and evicted launchers; connects are paced to {} in flight "
               "({})\n",
               largest, kListenBacklog, read_long_file("/proc/sys/net/core/somaxconn").value_or(-1), queue,
               unproven, open_files,
               options.connect_window == 0 ? std::string("none: --connect-window 0")
                                           : std::to_string(connect_window(options, open_files, largest)),
               options.connect_window >= 0 ? "--connect-window" : "the smaller of the two");
  // Every client socket takes an ephemeral port on the one loopback address.
  std::ifstream range("/proc/sys/net/ipv4/ip_local_port_range");
  long low = 0, high = 0;
  if (range >> low >> high && high - low + 1 < largest)
    throw util::InputError(fmt::format(
        "net.ipv4.ip_local_port_range ({}-{}) has {} ports, fewer than N = {} client connections; widen it "
        "(sysctl -w net.ipv4.ip_local_port_range=\"1024 65535\") or pass smaller --sizes",
        low, high, high - low + 1, largest));
}

// ---------------------------------------------------------------------------
// The service's memory: VmHWM is reset to the current RSS through
// /proc/self/clear_refs before a run, so the peak after it is the run's own.

std::optional<long> status_kib(const std::string& field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::stol(line.substr(field.size() + 1));
  }
  return std::nullopt;
}

bool reset_peak_rss() {
  std::ofstream clear_refs("/proc/self/clear_refs");
  clear_refs << "5";
  clear_refs.flush();
  return static_cast<bool>(clear_refs);
}

// ---------------------------------------------------------------------------
// The client side: what each forked process runs.

// What one client process reports after each phase (the World, then the
// failure broadcast), in one write() each (smaller than PIPE_BUF, so the
// reports of several processes never interleave on the shared pipe).
struct ClientReport {
  std::int32_t done = 0;            // launchers with a correct World (phase 1) or Verdict (phase 2)
  std::int32_t stops = 0;           // phase 2: launchers that got a Stop
  std::int64_t first_ns = 0;        // steady_clock when the first of them did
  std::int64_t last_ns = 0;         // and when the last did
  std::int64_t failure_sent_ns = 0; // phase 2, the reporter's process only: just before the Failure
  std::int64_t cpu_ns = 0;          // this process's CPU time over the phase
  // The frames as received, header and seal included (0: none arrived here).
  std::int32_t world_bytes = 0;
  std::int32_t stop_bytes = 0;
  std::int32_t verdict_bytes = 0;
  char error[400] = {};             // the first problem; empty when none
};
static_assert(sizeof(ClientReport) < PIPE_BUF);

struct SimulatedLauncher {
  util::Fd socket;
  rendezvous::JoinMessage join;  // all but the nonce and proof, which need the challenge
  rendezvous::FrameReader reader;
  rendezvous::Session session;   // sealed once the Join is sent
  bool welcomed = false;
  bool has_world = false;
  bool stopped = false;
  bool has_verdict = false;
};

// One client process's share of the launchers and what it needs to know.
struct ClientPlan {
  int port = 0;
  std::string token;
  int nnodes = 0;
  int first_rank = 0;
  int count = 0;
  int nproc = 0;
  int window = 0;  // this process's launchers connected but not yet welcomed, at most (0: no limit)
  util::Clock::time_point deadline;
};

// The failure the last slot's launcher reports: a worker that exited 3,
// with the 10 last lines of its output (the supervisor's summary_lines) of
// a Python traceback, as a real one carries them.
rendezvous::Failure reported_failure(int nnodes, int nproc) {
  rendezvous::Failure failure;
  failure.node_rank = nnodes - 1;
  failure.local_rank = nproc > 3 ? 3 : 0;
  failure.global_rank = (nnodes - 1) * nproc + failure.local_rank;
  failure.host = fmt::format("node{}", nnodes - 1);
  failure.pid = 424242;
  failure.exit_code = 3;
  failure.time = "2026-12-06T08:00:00.123+00:00";
  failure.log_file = fmt::format("/scratch/dlaunch-logs/rendezvous-scale/attempt_0/rank_{}.log", failure.global_rank);
  failure.last_lines = {
      "Traceback (most recent call last):",
      "  File \"/home/user/project/train.py\", line 214, in <module>",
      "    main()",
      "  File \"/home/user/project/train.py\", line 188, in main",
      "    loss = step(model, batch, optimizer)",
      "  File \"/home/user/project/train.py\", line 97, in step",
      "    loss = criterion(model(batch.inputs), batch.targets)",
      "  File \"/home/user/project/model.py\", line 61, in forward",
      "    raise RuntimeError(\"CUDA error: an illegal memory access was encountered\")",
      "RuntimeError: CUDA error: an illegal memory access was encountered",
  };
  return failure;
}

// What a launcher whose workers node 0 stopped reports (the supervisor's
// outcome() after a remote Stop): failed, every worker a consequence.
rendezvous::NodeOutcome stopped_outcome(int nproc) {
  rendezvous::NodeOutcome outcome;
  outcome.consequences = nproc;
  return outcome;
}

// And the reporter's: its failure as the root, its other workers stopped.
rendezvous::NodeOutcome failed_outcome(const rendezvous::Failure& failure, int nproc) {
  rendezvous::NodeOutcome outcome;
  outcome.failure = failure;
  outcome.consequences = nproc - 1;
  return outcome;
}

// Every launcher reports this host's interfaces, as a real launcher here
// would (RendezvousCoordinator sends net::list_interfaces()), so each Join
// has its real size and the service decodes and records real lists.
std::vector<SimulatedLauncher> prepare_launchers(const ClientPlan& plan) {
  std::vector<SimulatedLauncher> launchers(static_cast<std::size_t>(plan.count));
  const std::vector<net::Interface> interfaces = net::list_interfaces();
  for (int i = 0; i < plan.count; ++i) {
    auto& join = launchers[static_cast<std::size_t>(i)].join;
    join.run_id = "rendezvous-scale";
    join.node_rank = static_cast<std::uint32_t>(plan.first_rank + i);
    join.nnodes = static_cast<std::uint32_t>(plan.nnodes);
    join.nproc = static_cast<std::uint32_t>(plan.nproc);
    join.host = fmt::format("node{}", plan.first_rank + i);
    join.dlaunch_version = DLAUNCH_VERSION;
    join.interfaces = interfaces;
  }
  return launchers;
}

// A non-blocking connect, as many launchers started at once do it; the
// handshake completes in the kernel while the other sockets are opened.
void start_connect(SimulatedLauncher& launcher, int epoll_fd, std::uint32_t index, int port) {
  launcher.socket = util::Fd(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!launcher.socket) throw util::system_error("cannot create a client socket", errno);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  if (::connect(launcher.socket.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 &&
      errno != EINPROGRESS)
    throw util::system_error(fmt::format("node {} cannot connect to the service", launcher.join.node_rank),
                             errno);
  util::set_no_delay(launcher.socket.get());  // as the real client does
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.u32 = index;
  if (::epoll_ctl(epoll_fd, EPOLL_CTL_ADD, launcher.socket.get(), &event) != 0)
    throw util::system_error("cannot watch a client socket", errno);
}

// Sends BYTES whole. A loopback socket that took the World takes a small
// frame at once; a short write would mean something is badly wrong, not
// that it should wait.
void send_whole(SimulatedLauncher& launcher, const std::string& bytes, const char* what) {
  ssize_t sent = ::send(launcher.socket.get(), bytes.data(), bytes.size(), MSG_NOSIGNAL);
  if (sent != static_cast<ssize_t>(bytes.size()))
    throw util::system_error(fmt::format("node {} could not send its {}", launcher.join.node_rank, what), errno);
}

// A sealed frame of this launcher's, in round 0, as its coordinator sends it.
void send_sealed(SimulatedLauncher& launcher, MessageType type, const std::string& payload, const char* what) {
  send_whole(launcher, launcher.session.frame(type, payload, 0), what);
}

// The Join answering a Challenge, proved and sealed exactly as
// ServiceDialer::send_join does with a token: a SealedJoin, whose nonce and
// slot are all of the Join that travels in clear.
void answer_challenge(SimulatedLauncher& launcher, const ClientPlan& plan, const rendezvous::Frame& frame) {
  auto challenge = rendezvous::decode_challenge(frame.payload);
  if (!challenge.token_required) throw util::SystemError("the service did not ask for the job's token");
  auto& join = launcher.join;
  join.nonce = rendezvous::random_bytes(rendezvous::kChallengeSize);
  join.proof = rendezvous::join_proof(plan.token, challenge.nonce, join.nonce, rendezvous::signed_part(join));
  launcher.session = rendezvous::Session(plan.token, challenge.nonce, join.nonce, rendezvous::End::kLauncher);
  rendezvous::SealedJoinMessage sealed{
      join.nonce, join.node_rank,
      launcher.session.seal(MessageType::kSealedJoin, rendezvous::encode(join), join.round)};
  send_whole(launcher, rendezvous::encode_frame(MessageType::kSealedJoin, rendezvous::encode(sealed), join.round),
             "Join");
}

// What one launcher's frames did, for its process's counts.
struct FrameEvents {
  bool welcomed = false;
  bool world = false;
  bool verdict = false;
};

// The size of FRAME as it came on the wire: header, payload, seal.
std::int32_t wire_size(const rendezvous::Frame& frame) {
  return static_cast<std::int32_t>(rendezvous::encode_frame(frame.type, frame.payload, frame.generation).size());
}

// Checks the Verdict of the failure broadcast: failed, with the reported
// failure as its root, after a Stop (the reporter gets none: node 0 does
// not relay a failure to the launcher that reported it).
void check_verdict(SimulatedLauncher& launcher, const ClientPlan& plan, const std::string& payload) {
  const int node = static_cast<int>(launcher.join.node_rank);
  const bool reporter = node == plan.nnodes - 1;
  if (!reporter && !launcher.stopped) throw util::SystemError(fmt::format("node {} got the Verdict but no Stop", node));
  rendezvous::VerdictMessage message = rendezvous::decode_verdict(payload);
  const rendezvous::Failure expected = reported_failure(plan.nnodes, plan.nproc);
  const rendezvous::Verdict& verdict = message.verdict;
  if (message.round != 0 || verdict.kind != rendezvous::Verdict::Kind::kFailed || !verdict.failure ||
      verdict.failure->node_rank != expected.node_rank || verdict.failure->global_rank != expected.global_rank ||
      verdict.exit_code != expected.exit_code)
    throw util::SystemError(fmt::format(
        "node {} got a wrong Verdict: round {}, kind {}, exit code {}, root failure {} (expected round 0, "
        "failed, exit code {}, rank {} on node {})",
        node, message.round, static_cast<int>(verdict.kind), verdict.exit_code,
        verdict.failure ? rendezvous::describe_failure(*verdict.failure) : std::string("none"), expected.exit_code,
        expected.global_rank, expected.node_rank));
}

// Handles one frame of LAUNCHER's. FAILING: the failure was sent, so a
// Stop and the Verdict may come.
FrameEvents handle_frame(SimulatedLauncher& launcher, const ClientPlan& plan, rendezvous::Frame frame, bool failing,
                         ClientReport& report) {
  FrameEvents events;
  const auto node = launcher.join.node_rank;
  if (frame.type == MessageType::kChallenge) {
    answer_challenge(launcher, plan, frame);
    return events;
  }
  const std::int32_t size = wire_size(frame);
  frame.payload = launcher.session.open(frame);  // node 0's proof, on every frame
  switch (frame.type) {
    case MessageType::kWelcome:
      if (launcher.welcomed) throw util::SystemError(fmt::format("node {} got a second Welcome", node));
      launcher.welcomed = events.welcomed = true;
      return events;
    case MessageType::kHeartbeat: return events;
    case MessageType::kWorld: {
      if (!launcher.welcomed || launcher.has_world)
        throw util::SystemError(fmt::format("node {} got a World before its Welcome or a second one", node));
      rendezvous::World world = rendezvous::decode_world(frame.payload);
      if (world.nnodes() != plan.nnodes || world.world_size() != plan.nnodes * plan.nproc)
        throw util::SystemError(fmt::format("node {} got a wrong world: {} nodes, world size {} (expected {} "
                                            "and {})",
                                            node, world.nnodes(), world.world_size(), plan.nnodes,
                                            plan.nnodes * plan.nproc));
      report.world_bytes = size;
      launcher.has_world = events.world = true;
      return events;
    }
    case MessageType::kStop: {
      if (!failing || !launcher.has_world || launcher.stopped || launcher.has_verdict)
        throw util::SystemError(fmt::format("node {} got a Stop {}", node,
                                            failing ? "twice, or after its Verdict" : "before any failure"));
      auto stop = rendezvous::decode_text(frame.payload);
      if (stop.round != 0 || stop.reason.find(fmt::format("node {}", plan.nnodes - 1)) == std::string::npos)
        throw util::SystemError(fmt::format("node {} got a Stop of round {} that does not name node {}: {}", node,
                                            stop.round, plan.nnodes - 1, stop.reason));
      report.stop_bytes = size;
      launcher.stopped = true;
      ++report.stops;
      send_sealed(launcher, MessageType::kOutcome,
                  rendezvous::encode(rendezvous::OutcomeMessage{0, stopped_outcome(plan.nproc)}), "Outcome");
      return events;
    }
    case MessageType::kVerdict:
      if (!failing || launcher.has_verdict)
        throw util::SystemError(fmt::format("node {} got a Verdict before any failure, or twice", node));
      check_verdict(launcher, plan, frame.payload);
      report.verdict_bytes = size;
      launcher.has_verdict = events.verdict = true;
      return events;
    case MessageType::kAbort:
      throw util::SystemError(
          fmt::format("the service aborted node {}: {}", node, rendezvous::decode_text(frame.payload).reason));
    default:
      throw util::SystemError(
          fmt::format("node {} got unexpected message type {}", node, static_cast<int>(frame.type)));
  }
}

// Reads what the socket holds and handles every whole frame.
FrameEvents on_readable(SimulatedLauncher& launcher, const ClientPlan& plan, bool failing, ClientReport& report) {
  char buffer[16384];
  bool open = true;
  for (;;) {
    ssize_t got = ::recv(launcher.socket.get(), buffer, sizeof(buffer), 0);
    if (got > 0) {
      launcher.reader.append(std::string_view(buffer, static_cast<std::size_t>(got)));
      continue;
    }
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 && errno == EAGAIN) break;
    if (got < 0)
      throw util::SystemError(fmt::format("node {}'s connection failed: {}", launcher.join.node_rank,
                                          std::strerror(errno)));
    open = false;
    break;
  }
  FrameEvents events;
  while (auto frame = launcher.reader.next()) {
    FrameEvents one = handle_frame(launcher, plan, std::move(*frame), failing, report);
    events.welcomed |= one.welcomed;
    events.world |= one.world;
    events.verdict |= one.verdict;
  }
  // A reader keeps the capacity of the largest frame it held (the World,
  // O(N) bytes): thousands of them would hold gigabytes.
  if (launcher.reader.empty()) launcher.reader = rendezvous::FrameReader();
  if (!open && !launcher.has_verdict)
    throw util::SystemError(fmt::format("the service closed node {}'s connection before its {}",
                                        launcher.join.node_rank, launcher.has_world ? "Verdict" : "World"));
  return events;
}

// Phase 1: connects every launcher of PLAN, at most plan.window of them
// not yet welcomed at once, and drives them until each has its World.
ClientReport drive_to_world(const ClientPlan& plan, std::vector<SimulatedLauncher>& launchers, int epoll_fd) {
  ClientReport report;
  std::int64_t cpu_start = process_cpu_ns(RUSAGE_SELF);
  std::size_t next = 0, connecting = 0;
  auto connect_more = [&] {
    while (next < launchers.size() && (plan.window == 0 || connecting < static_cast<std::size_t>(plan.window))) {
      start_connect(launchers[next], epoll_fd, static_cast<std::uint32_t>(next), plan.port);
      ++next;
      ++connecting;
    }
  };
  connect_more();
  epoll_event events[256];
  while (report.done < plan.count) {
    int ready = ::epoll_wait(epoll_fd, events, 256, util::millis_until(plan.deadline));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) throw util::system_error("client epoll_wait failed", errno);
    if (ready == 0)
      throw util::SystemError(fmt::format("only {} of this process's {} launchers had their World after the "
                                          "--timeout",
                                          report.done, plan.count));
    for (int i = 0; i < ready; ++i) {
      auto& launcher = launchers[events[i].data.u32];
      FrameEvents happened = on_readable(launcher, plan, false, report);
      if (happened.welcomed) --connecting;
      if (happened.world) {
        report.last_ns = now_ns();
        if (report.done++ == 0) report.first_ns = report.last_ns;
      }
    }
    connect_more();
  }
  report.cpu_ns = process_cpu_ns(RUSAGE_SELF) - cpu_start;
  return report;
}

// Phase 2: the last slot's launcher, when it is this process's, reports its
// failure and its outcome; every launcher then waits for its Stop (answered
// with its Outcome) and its Verdict.
ClientReport drive_failure(const ClientPlan& plan, std::vector<SimulatedLauncher>& launchers, int epoll_fd) {
  ClientReport report;
  std::int64_t cpu_start = process_cpu_ns(RUSAGE_SELF);
  if (plan.first_rank + plan.count == plan.nnodes) {
    auto& reporter = launchers.back();
    const rendezvous::Failure failure = reported_failure(plan.nnodes, plan.nproc);
    report.failure_sent_ns = now_ns();
    send_sealed(reporter, MessageType::kFailure, rendezvous::encode(failure), "Failure");
    send_sealed(reporter, MessageType::kOutcome,
                rendezvous::encode(rendezvous::OutcomeMessage{0, failed_outcome(failure, plan.nproc)}), "Outcome");
  }
  epoll_event events[256];
  while (report.done < plan.count) {
    int ready = ::epoll_wait(epoll_fd, events, 256, util::millis_until(plan.deadline));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) throw util::system_error("client epoll_wait failed", errno);
    if (ready == 0)
      throw util::SystemError(fmt::format("only {} of this process's {} launchers had their Verdict ({} a Stop) "
                                          "after the --timeout",
                                          report.done, plan.count, report.stops));
    for (int i = 0; i < ready; ++i) {
      auto& launcher = launchers[events[i].data.u32];
      if (launcher.has_verdict) {
        // Nothing after the Verdict matters (a heartbeat, node 0 closing).
        ::epoll_ctl(epoll_fd, EPOLL_CTL_DEL, launcher.socket.get(), nullptr);
        continue;
      }
      if (on_readable(launcher, plan, true, report).verdict) {
        report.last_ns = now_ns();
        if (report.done++ == 0) report.first_ns = report.last_ns;
      }
    }
  }
  report.cpu_ns = process_cpu_ns(RUSAGE_SELF) - cpu_start;
  return report;
}

void write_report(int fd, ClientReport report, const std::string& error) {
  std::snprintf(report.error, sizeof(report.error), "%s", error.c_str());
  if (::write(fd, &report, sizeof(report)) != static_cast<ssize_t>(sizeof(report))) ::_exit(3);
}

// Blocks until the write end of FD is closed everywhere.
void wait_for_eof(int fd) {
  char byte = 0;
  while (util::read_retrying(fd, &byte, 1) > 0) {
  }
}

// The pipes a client process reads from or writes to.
struct ClientFds {
  int ready = -1;   // write: prepared
  int go = -1;      // read: EOF releases phase 1
  int fail = -1;    // read: EOF starts phase 2 (every World is in)
  int report = -1;  // write: a ClientReport per phase
  int quit = -1;    // read: EOF lets the process exit
};

// The body of one forked client process. It prepares everything, says it
// is ready, waits for the release (EOF on GO), drives its launchers to the
// World and reports, waits for FAIL, drives the failure broadcast and
// reports, then keeps its connections open until QUIT closes, so no
// launcher leaves while the service still counts on it.
[[noreturn]] void client_process(const ClientPlan& plan, const ClientFds& fds) {
  std::vector<SimulatedLauncher> launchers;
  std::string error;
  util::Fd epoll;
  try {
    launchers = prepare_launchers(plan);
    epoll = util::Fd(::epoll_create1(EPOLL_CLOEXEC));
    if (!epoll) throw util::system_error("cannot create a client epoll", errno);
    char byte = 'r';
    if (!util::write_all(fds.ready, std::string_view(&byte, 1))) ::_exit(3);
    wait_for_eof(fds.go);
  } catch (const std::exception& caught) {
    error = caught.what();
  }
  for (int phase = 1; phase <= 2; ++phase) {
    ClientReport report;
    if (error.empty()) {
      try {
        report = phase == 1 ? drive_to_world(plan, launchers, epoll.get())
                            : drive_failure(plan, launchers, epoll.get());
      } catch (const std::exception& caught) {
        error = caught.what();
      }
    }
    write_report(fds.report, report, error);
    if (phase == 1) wait_for_eof(fds.fail);
  }
  wait_for_eof(fds.quit);
  ::_exit(0);
}

// ---------------------------------------------------------------------------
// The service side: one timed run.

// The client processes of one run; any that are still there when it goes
// out of scope (an error) are killed and reaped.
class ClientGroup {
 public:
  ClientGroup() = default;
  ClientGroup(const ClientGroup&) = delete;
  ClientGroup& operator=(const ClientGroup&) = delete;
  ~ClientGroup() {
    for (pid_t pid : pids_) ::kill(pid, SIGKILL);
    reap();
  }
  void add(pid_t pid) { pids_.push_back(pid); }
  std::size_t size() const { return pids_.size(); }
  // Waits for every client; the number that did not exit with status 0.
  int reap() {
    int failed = 0;
    for (pid_t pid : pids_) {
      int status = 0;
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failed;
    }
    pids_.clear();
    return failed;
  }

 private:
  std::vector<pid_t> pids_;
};

struct RunPipes {
  util::Pipe ready = util::make_pipe();   // clients -> service: prepared
  util::Pipe go = util::make_pipe();      // closed by the service: start now
  util::Pipe fail = util::make_pipe();    // closed by the service: every World is in, fail now
  util::Pipe report = util::make_pipe();  // clients -> service: ClientReport
  util::Pipe quit = util::make_pipe();    // closed by the service: you may exit
};

struct RunResult {
  double ms = 0;                // service start to the last World
  double failure_ms = 0;        // the Failure sent to the last Verdict
  double failure_service_cpu_ms = 0;  // the service's CPU time over the failure broadcast
  int world_bytes = 0, stop_bytes = 0, verdict_bytes = 0;  // frames as received
  // The first World to the last: the service sends the World as soon as the
  // last Join is in, so this is its fan-out to N sockets, and ms - fanout_ms
  // the time for all N to connect and join.
  double fanout_ms = 0;
  std::optional<long> rss_growth_kib;  // the service process's peak RSS above its RSS at the start
  double service_cpu_ms = 0;    // the service process's CPU time (its thread does the work)
  double clients_cpu_ms = 0;    // all client processes together
};

// Forks the client processes, launchers split evenly by rank. They are
// forked before the service's thread exists, so no lock can be held across
// the fork.
void fork_clients(ClientGroup& clients, RunPipes& pipes, util::Fd& listener, const ClientPlan& base,
                  int processes) {
  for (int c = 0; c < processes; ++c) {
    ClientPlan plan = base;
    plan.first_rank = static_cast<int>(static_cast<long>(base.nnodes) * c / processes);
    plan.count = static_cast<int>(static_cast<long>(base.nnodes) * (c + 1) / processes) - plan.first_rank;
    std::fflush(nullptr);
    pid_t pid = ::fork();
    if (pid < 0) throw util::system_error("cannot fork a client process", errno);
    if (pid == 0) {
      listener.reset();  // only the service accepts
      pipes.ready.read_end.reset();
      pipes.go.write_end.reset();
      pipes.fail.write_end.reset();
      pipes.report.read_end.reset();
      pipes.quit.write_end.reset();
      client_process(plan, ClientFds{pipes.ready.write_end.get(), pipes.go.read_end.get(), pipes.fail.read_end.get(),
                                     pipes.report.write_end.get(), pipes.quit.read_end.get()});
    }
    clients.add(pid);
  }
  pipes.ready.write_end.reset();
  pipes.go.read_end.reset();
  pipes.fail.read_end.reset();
  pipes.report.write_end.reset();
  pipes.quit.read_end.reset();
}

// Reads exactly SIZE bytes from FD before DEADLINE.
void read_exactly(int fd, void* buffer, std::size_t size, util::Clock::time_point deadline,
                  const char* what) {
  auto* bytes = static_cast<char*>(buffer);
  while (size > 0) {
    pollfd readable{fd, POLLIN, 0};
    int ready = ::poll(&readable, 1, util::millis_until(deadline));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) throw util::SystemError(fmt::format("timed out waiting for {}", what));
    ssize_t got = util::read_retrying(fd, bytes, size);
    if (got <= 0) throw util::SystemError(fmt::format("a client process exited before {}", what));
    bytes += got;
    size -= static_cast<std::size_t>(got);
  }
}

struct Collected {
  std::int64_t first_ns = 0;
  std::int64_t last_ns = 0;
  std::int64_t failure_sent_ns = 0;
  std::int64_t clients_cpu_ns = 0;
  int stops = 0;
  int world_bytes = 0, stop_bytes = 0, verdict_bytes = 0;
};

// Collects every client process's report of PHASE (1: the World, 2: the
// failure broadcast) and checks it: every launcher got what it must, or
// the run is an error, not a figure.
Collected collect_reports(RunPipes& pipes, const ClientGroup& clients, int n, int phase,
                          util::Clock::time_point deadline) {
  const char* what = phase == 1 ? "World" : "Verdict";
  Collected collected;
  collected.first_ns = INT64_MAX;
  int done = 0;
  std::string errors;
  for (std::size_t c = 0; c < clients.size(); ++c) {
    ClientReport report;
    read_exactly(pipes.report.read_end.get(), &report, sizeof(report), deadline, "the clients' reports");
    if (report.error[0] != '\0') errors += fmt::format("\n  {}", report.error);
    done += report.done;
    collected.stops += report.stops;
    if (report.done > 0) collected.first_ns = std::min(collected.first_ns, report.first_ns);
    collected.last_ns = std::max(collected.last_ns, report.last_ns);
    collected.failure_sent_ns = std::max(collected.failure_sent_ns, report.failure_sent_ns);
    collected.clients_cpu_ns += report.cpu_ns;
    collected.world_bytes = std::max(collected.world_bytes, report.world_bytes);
    collected.stop_bytes = std::max(collected.stop_bytes, report.stop_bytes);
    collected.verdict_bytes = std::max(collected.verdict_bytes, report.verdict_bytes);
  }
  if (!errors.empty()) throw util::SystemError(fmt::format("N = {}: the clients failed:{}", n, errors));
  if (done != n) throw util::SystemError(fmt::format("N = {}: {} launchers got their {}, not {}", n, done, what, n));
  if (phase == 2 && (collected.stops < n - 1 || collected.failure_sent_ns == 0))
    throw util::SystemError(fmt::format("N = {}: {} launchers got a Stop, not the {} besides the reporter{}", n,
                                        collected.stops, n - 1,
                                        collected.failure_sent_ns == 0 ? ", and no client sent the Failure" : ""));
  return collected;
}

RunResult run_once(int n, const Options& options, const std::string& token, long open_files) {
  util::Fd listener = util::listen_tcp(0);
  const int processes = std::min(options.processes, n);
  ClientPlan plan;
  plan.port = util::bound_port(listener.get());
  plan.token = token;
  plan.nnodes = n;
  plan.nproc = options.nproc;
  if (long window = connect_window(options, open_files, n); window > 0)
    plan.window = static_cast<int>(std::max(1L, window / processes));
  plan.deadline = util::Clock::now() + std::chrono::seconds(options.timeout_s);
  RunPipes pipes;
  ClientGroup clients;
  fork_clients(clients, pipes, listener, plan, processes);
  for (std::size_t c = 0; c < clients.size(); ++c) {
    char byte = 0;
    read_exactly(pipes.ready.read_end.get(), &byte, 1, plan.deadline, "the clients to be ready");
  }

  rendezvous::ServerSettings settings;
  // No network survey: it probes between hosts, and here every launcher is
  // on this one host (one loopback), so it would time nothing a real network
  // does; it is a step of its own before round 0, not part of the
  // handshake-to-World this benchmark times (as before protocol 6 added it).
  settings.job.survey_network = false;
  settings.job.nnodes = n;
  settings.job.run_id = "rendezvous-scale";
  settings.worker_master_addr = "127.0.0.1";
  settings.job.token = token;
  settings.job.join_timeout = std::chrono::seconds(options.timeout_s);
  if (options.heartbeat_timeout_s > 0)
    settings.job.heartbeat_timeout = std::chrono::seconds(options.heartbeat_timeout_s);
  // Written by the service's thread only, read once it is joined.
  auto log = std::make_shared<std::vector<std::string>>();
  settings.log = [log](const std::string& message) { log->push_back(message); };

  ::malloc_trim(0);  // what earlier runs freed does not hide this run's growth
  bool peak_reset = reset_peak_rss();
  auto rss_start = status_kib("VmRSS");
  std::int64_t cpu_start = process_cpu_ns(RUSAGE_SELF);
  std::int64_t start_ns = now_ns();
  auto server = std::make_unique<rendezvous::RendezvousServer>(std::move(listener), settings);
  pipes.go.write_end.reset();  // releases every client at once

  RunResult result;
  // Phase 1, the World; then phase 2, the failure broadcast.
  auto collect = [&](int phase) {
    try {
      return collect_reports(pipes, clients, n, phase, plan.deadline);
    } catch (...) {
      server.reset();  // joins the service's thread, so its log can be read
      for (std::size_t i = 0; i < log->size() && i < 5; ++i) fmt::print(stderr, "  service log: {}\n", (*log)[i]);
      throw;
    }
  };
  Collected world = collect(1);
  result.ms = static_cast<double>(world.last_ns - start_ns) / 1e6;
  result.fanout_ms = static_cast<double>(world.last_ns - world.first_ns) / 1e6;
  std::int64_t cpu_at_world = process_cpu_ns(RUSAGE_SELF);
  result.service_cpu_ms = static_cast<double>(cpu_at_world - cpu_start) / 1e6;
  result.clients_cpu_ms = static_cast<double>(world.clients_cpu_ns) / 1e6;
  auto peak = status_kib(peak_reset ? "VmHWM" : "VmRSS");
  if (peak && rss_start) result.rss_growth_kib = *peak - *rss_start;

  pipes.fail.write_end.reset();  // every World is in: the last slot's launcher fails now
  Collected failure = collect(2);
  result.failure_ms = static_cast<double>(failure.last_ns - failure.failure_sent_ns) / 1e6;
  result.failure_service_cpu_ms = static_cast<double>(process_cpu_ns(RUSAGE_SELF) - cpu_at_world) / 1e6;
  result.world_bytes = world.world_bytes;
  result.stop_bytes = failure.stop_bytes;
  result.verdict_bytes = failure.verdict_bytes;

  server.reset();  // the service closes first, so TIME_WAIT stays on its side
  pipes.quit.write_end.reset();
  if (int failed = clients.reap(); failed > 0)
    throw util::SystemError(fmt::format("N = {}: {} client processes failed", n, failed));
  if (!log->empty())
    throw util::SystemError(
        fmt::format("N = {}: the service logged {} problems, the first: {}", n, log->size(), log->front()));
  return result;
}

// ---------------------------------------------------------------------------
// Summaries.

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  std::size_t middle = values.size() / 2;
  return values.size() % 2 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

void print_run(int n, int run, int runs, const RunResult& result) {
  fmt::print(stderr,
             "  N={:<5} run {}/{}: World {:9.2f} ms (fan-out {:7.2f} ms)  service CPU {:7.1f} ms  clients CPU "
             "{:7.1f} ms  service peak RSS +{}  failure -> last Verdict {:8.2f} ms (service CPU {:6.1f} ms)  "
             "frames: World {} B, Stop {} B, Verdict {} B\n",
             n, run, runs, result.ms, result.fanout_ms, result.service_cpu_ms, result.clients_cpu_ms,
             result.rss_growth_kib ? fmt::format("{:.2f} MiB", static_cast<double>(*result.rss_growth_kib) / 1024)
                                   : std::string("?"),
             result.failure_ms, result.failure_service_cpu_ms, result.world_bytes, result.stop_bytes,
             result.verdict_bytes);
}

// One tab-separated line for N: N, median ms, min ms, the largest service
// RSS growth (KiB, -1 unknown), median service and clients CPU ms, median
// World fan-out ms, median and min failure broadcast ms, median service CPU
// ms of the failure broadcast.
void print_summary(int n, const std::vector<RunResult>& runs) {
  std::vector<double> ms, service_cpu, clients_cpu, fanout, failure, failure_cpu;
  long growth = -1;
  for (const auto& run : runs) {
    ms.push_back(run.ms);
    service_cpu.push_back(run.service_cpu_ms);
    clients_cpu.push_back(run.clients_cpu_ms);
    fanout.push_back(run.fanout_ms);
    failure.push_back(run.failure_ms);
    failure_cpu.push_back(run.failure_service_cpu_ms);
    if (run.rss_growth_kib) growth = std::max(growth, *run.rss_growth_kib);
  }
  fmt::print("{}\t{:.3f}\t{:.3f}\t{}\t{:.1f}\t{:.1f}\t{:.3f}\t{:.3f}\t{:.3f}\t{:.1f}\n", n, median(ms),
             *std::min_element(ms.begin(), ms.end()), growth, median(service_cpu), median(clients_cpu),
             median(fanout), median(failure), *std::min_element(failure.begin(), failure.end()),
             median(failure_cpu));
  std::fflush(stdout);
}

// ---------------------------------------------------------------------------
// --message-sizes: every message of the paths the cost model counts,
// encoded by protocol.cc and sealed by session.cc as they travel.

// The World node 0 sends for N launchers of NPROC workers: as in this
// benchmark (every address 127.0.0.1, no survey: no interface chosen), or
// as on a cluster whose survey chose each host's interface (distinct
// 10.x.y.z addresses, one interface name).
rendezvous::World sample_world(int n, int nproc, bool surveyed) {
  rendezvous::World world;
  world.run_id = "rendezvous-scale";
  world.worker_master_addr = surveyed ? "10.0.0.1" : "127.0.0.1";
  world.worker_master_port = 29500;
  world.heartbeat_timeout_ms = 30000;
  world.incarnation = std::string(16, 'a');
  world.nproc_per_node.assign(static_cast<std::size_t>(n), nproc);
  for (int slot = 0; slot < n; ++slot) {
    world.node_slots.push_back(slot);
    std::string address =
        surveyed ? fmt::format("10.{}.{}.{}", slot / 65536, (slot / 256) % 256, slot % 256 + 1) : "127.0.0.1";
    world.addresses.push_back(address);
    world.ifnames.push_back(surveyed ? "ens1f0np0" : "");
    world.ifaddresses.push_back(surveyed ? address : "");
  }
  return world;
}

void print_message_sizes(const Options& options, const std::string& token) {
  const int nproc = options.nproc;
  const std::string challenge_nonce = rendezvous::random_bytes(rendezvous::kChallengeSize);
  fmt::print("# message\tdirection\tN\tpayload_bytes\tframe_bytes\tseal_us\n");
  for (int n : options.sizes) {
    ClientPlan plan;
    plan.nnodes = n;
    plan.count = 1;
    plan.first_rank = n - 1;
    plan.nproc = nproc;
    SimulatedLauncher launcher = std::move(prepare_launchers(plan).front());
    auto& join = launcher.join;
    join.nonce = rendezvous::random_bytes(rendezvous::kChallengeSize);
    join.proof = rendezvous::join_proof(token, challenge_nonce, join.nonce, rendezvous::signed_part(join));
    rendezvous::Session session(token, challenge_nonce, join.nonce, rendezvous::End::kLauncher);
    // SEAL_US: microseconds to seal the payload into its frame (the median
    // of 5 batches of about 8 MiB each), what each copy costs its sender.
    auto row = [&](const char* name, const char* direction, MessageType type, const std::string& payload) {
      const std::size_t frame_size = session.frame(type, payload, 0).size();
      const int batch = static_cast<int>(std::clamp<std::size_t>((8u << 20) / frame_size, 3, 20000));
      std::vector<double> per_seal;
      for (int round = 0; round < 5; ++round) {
        std::int64_t start = now_ns();
        std::size_t sink = 0;
        for (int i = 0; i < batch; ++i) sink += session.frame(type, payload, 0).size();
        if (sink == 0) throw util::SystemError("an empty frame");
        per_seal.push_back(static_cast<double>(now_ns() - start) / 1e3 / batch);
      }
      fmt::print("{}\t{}\t{}\t{}\t{}\t{:.2f}\n", name, direction, n, payload.size(), frame_size, median(per_seal));
    };
    const std::string challenge = rendezvous::encode(rendezvous::ChallengeMessage{challenge_nonce, true, 30000});
    fmt::print("{}\t{}\t{}\t{}\t{}\t-\n", "Challenge", "node0->launcher", n, challenge.size(),
               rendezvous::encode_frame(MessageType::kChallenge, challenge).size());
    const std::string sealed_join = rendezvous::encode(rendezvous::SealedJoinMessage{
        join.nonce, join.node_rank, session.seal(MessageType::kSealedJoin, rendezvous::encode(join), 0)});
    fmt::print("{}\t{}\t{}\t{}\t{}\t-\n", "SealedJoin", "launcher->node0", n, sealed_join.size(),
               rendezvous::encode_frame(MessageType::kSealedJoin, sealed_join).size());
    row("Welcome", "node0->launcher", MessageType::kWelcome,
        rendezvous::encode(rendezvous::WelcomeMessage{30000, join.node_rank}));
    row("World(loopback,no-survey)", "node0->launcher", MessageType::kWorld,
        rendezvous::encode(sample_world(n, nproc, false)));
    row("World(surveyed-cluster)", "node0->launcher", MessageType::kWorld,
        rendezvous::encode(sample_world(n, nproc, true)));
    row("Started", "launcher->node0", MessageType::kStarted, "");
    row("Heartbeat", "both", MessageType::kHeartbeat, "");
    rendezvous::ProgressMessage progress{0, 1200, {}};
    for (int local = 0; local < nproc; ++local)
      progress.steps.push_back(rendezvous::RankStep{(n - 1) * nproc + local, 123456});
    row("Progress", "launcher->node0", MessageType::kProgress, rendezvous::encode(progress));
    const rendezvous::Failure failure = reported_failure(n, nproc);
    row("Failure", "launcher->node0", MessageType::kFailure, rendezvous::encode(failure));
    row("Stop", "node0->launcher", MessageType::kStop,
        rendezvous::encode(rendezvous::TextMessage{
            0, fmt::format("the job failed on node {}: {}", failure.node_rank,
                           rendezvous::describe_failure(failure))}));
    row("Outcome(stopped)", "launcher->node0", MessageType::kOutcome,
        rendezvous::encode(rendezvous::OutcomeMessage{0, stopped_outcome(nproc)}));
    row("Outcome(failed)", "launcher->node0", MessageType::kOutcome,
        rendezvous::encode(rendezvous::OutcomeMessage{0, failed_outcome(failure, nproc)}));
    rendezvous::Verdict verdict;
    verdict.kind = rendezvous::Verdict::Kind::kFailed;
    verdict.exit_code = failure.exit_code;
    verdict.failure = failure;
    verdict.consequences = n * nproc - 1;
    row("Verdict(failed,no-timeline)", "node0->launcher", MessageType::kVerdict,
        rendezvous::encode(rendezvous::VerdictMessage{0, verdict}));
    rendezvous::NodeOutcome succeeded;
    succeeded.succeeded = true;
    succeeded.top_step = 123456;
    row("Outcome(succeeded)", "launcher->node0", MessageType::kOutcome,
        rendezvous::encode(rendezvous::OutcomeMessage{0, succeeded}));
    row("Verdict(succeeded)", "node0->launcher", MessageType::kVerdict,
        rendezvous::encode(rendezvous::VerdictMessage{0, rendezvous::Verdict{}}));
  }
}

int run_benchmark(const Options& options) {
  std::string token = rendezvous::generate_token();  // as dlaunch submit gives a job
  if (options.message_sizes) {
    print_message_sizes(options, token);
    return 0;
  }
  int largest = *std::max_element(options.sizes.begin(), options.sizes.end());
  long open_files = raise_descriptor_limit(largest, options.processes);
  warn_about_kernel_limits(options, open_files);
  fmt::print(stderr, "rendezvous_scale: {} client processes, {} workers per node, {} runs per N (+1 "
                     "untimed warm-up)\n",
             options.processes, options.nproc, options.runs);
  run_once(options.sizes.front(), options, token, open_files);  // warm-up: first-use costs (libraries, RNG)
  fmt::print("# N\tmedian_ms\tmin_ms\tservice_rss_growth_kib\tservice_cpu_ms\tclients_cpu_ms\tfanout_ms\t"
             "failure_median_ms\tfailure_min_ms\tfailure_service_cpu_ms\n");
  for (int n : options.sizes) {
    std::vector<RunResult> runs;
    for (int run = 1; run <= options.runs; ++run) {
      runs.push_back(run_once(n, options, token, open_files));
      print_run(n, run, options.runs, runs.back());
    }
    print_summary(n, runs);
  }
  return 0;
}

}  // namespace
}  // namespace dlaunch::bench

int main(int argc, char** argv) {
  try {
    return dlaunch::bench::run_benchmark(dlaunch::bench::parse_options(argc, argv));
  } catch (const std::exception& error) {
    std::fprintf(stderr, "rendezvous_scale: %s\n", error.what());
    return 1;
  }
}

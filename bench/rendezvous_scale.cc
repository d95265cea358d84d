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
// Timed: from just before the service is constructed, the client processes
// being released at that moment through a pipe (so process start-up and
// client set-up are not timed), to the last World any client received
// (steady_clock is CLOCK_MONOTONIC, one clock for all processes).
//
// stdout: one tab-separated line per N (bench/rendezvous_scale formats the
// table); stderr: every run.
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
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    std::exit(app.exit(error));
  }
  for (int n : options.sizes)
    if (n < 1 || n > 65536) throw util::InputError(fmt::format("--sizes: {} is not in 1..65536", n));
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
// and the client processes one each too, so N = 4096 needs well over the
// usual soft limit of 1024 descriptors.

void raise_descriptor_limit(int largest_n, int processes) {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) throw util::system_error("cannot read RLIMIT_NOFILE", errno);
  limit.rlim_cur = limit.rlim_max;
  if (::setrlimit(RLIMIT_NOFILE, &limit) != 0) throw util::system_error("cannot raise RLIMIT_NOFILE", errno);
  // The service's process: N sockets, the listener, pipes and stdio; each
  // client process: its share of N.
  auto needed = static_cast<rlim_t>(largest_n + 64);
  if (limit.rlim_max != RLIM_INFINITY && limit.rlim_max < needed)
    throw util::InputError(fmt::format(
        "the hard limit on open files (RLIMIT_NOFILE, `ulimit -Hn`) is {}, but N = {} needs at "
        "least {} (one socket per launcher in the service, {} client processes); raise it as root "
        "(`ulimit -Hn {}` in the shell that runs the benchmark, or LimitNOFILE= / limits.conf) or "
        "pass smaller --sizes",
        limit.rlim_max, largest_n, needed, processes, needed));
}

std::optional<long> read_long_file(const char* path) {
  std::ifstream file(path);
  long value = 0;
  if (file >> value) return value;
  return std::nullopt;
}

// Limits that would not fail the run but would distort it: a listen backlog
// smaller than N drops SYNs, and each dropped SYN costs a 1 s retransmit.
void warn_about_kernel_limits(int largest_n) {
  if (auto somaxconn = read_long_file("/proc/sys/net/core/somaxconn"); somaxconn && *somaxconn < largest_n)
    fmt::print(stderr,
               "note: net.core.somaxconn is {} (the service listens with a backlog of 4096, capped by "
               "it), below N = {}: connections beyond it wait for SYN retransmits (1 s), which the "
               "figures then include\n",
               *somaxconn, largest_n);
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

// What one client process reports, in one write() (smaller than PIPE_BUF,
// so the reports of several processes never interleave on the shared pipe).
struct ClientReport {
  std::int32_t worlds = 0;          // launchers that received a correct World
  std::int64_t first_world_ns = 0;  // steady_clock when the first of them did
  std::int64_t last_world_ns = 0;   // and when the last did
  std::int64_t cpu_ns = 0;         // this process's CPU time from release to then
  char error[400] = {};            // the first problem; empty when none
};
static_assert(sizeof(ClientReport) < PIPE_BUF);

struct SimulatedLauncher {
  util::Fd socket;
  rendezvous::JoinMessage join;  // all but the nonce and proof, which need the challenge
  rendezvous::FrameReader reader;
  rendezvous::Session session;   // sealed once the Join is sent
  bool welcomed = false;
  bool has_world = false;
};

// One client process's share of the launchers and what it needs to know.
struct ClientPlan {
  int port = 0;
  std::string token;
  int nnodes = 0;
  int first_rank = 0;
  int count = 0;
  int nproc = 0;
  util::Clock::time_point deadline;
};

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
  std::string bytes =
      rendezvous::encode_frame(MessageType::kSealedJoin, rendezvous::encode(sealed), join.round);
  // A fresh loopback socket takes a few hundred bytes at once; a short
  // write would mean something is badly wrong, not that it should wait.
  ssize_t sent = ::send(launcher.socket.get(), bytes.data(), bytes.size(), MSG_NOSIGNAL);
  if (sent != static_cast<ssize_t>(bytes.size()))
    throw util::system_error(fmt::format("node {} could not send its Join", launcher.join.node_rank), errno);
}

// Handles one frame; true when it was this launcher's World.
bool handle_frame(SimulatedLauncher& launcher, const ClientPlan& plan, rendezvous::Frame frame) {
  if (frame.type == rendezvous::MessageType::kChallenge) {
    answer_challenge(launcher, plan, frame);
    return false;
  }
  frame.payload = launcher.session.open(frame);  // node 0's proof, on every frame
  switch (frame.type) {
    case rendezvous::MessageType::kWelcome: launcher.welcomed = true; return false;
    case rendezvous::MessageType::kHeartbeat: return false;
    case rendezvous::MessageType::kWorld: {
      if (!launcher.welcomed) throw util::SystemError("a World before the Welcome");
      rendezvous::World world = rendezvous::decode_world(frame.payload);
      if (world.nnodes() != plan.nnodes || world.world_size() != plan.nnodes * plan.nproc)
        throw util::SystemError(fmt::format("node {} got a wrong world: {} nodes, world size {} (expected {} "
                                      "and {})",
                                      launcher.join.node_rank, world.nnodes(), world.world_size(),
                                      plan.nnodes, plan.nnodes * plan.nproc));
      return true;
    }
    case rendezvous::MessageType::kAbort:
      throw util::SystemError(fmt::format("the service aborted node {}: {}", launcher.join.node_rank,
                                    rendezvous::decode_text(frame.payload).reason));
    default:
      throw util::SystemError(fmt::format("node {} got unexpected message type {}", launcher.join.node_rank,
                                    static_cast<int>(frame.type)));
  }
}

// Reads what the socket holds and handles every whole frame. True when the
// World arrived with it.
bool on_readable(SimulatedLauncher& launcher, const ClientPlan& plan) {
  char buffer[4096];
  for (;;) {
    ssize_t got = ::recv(launcher.socket.get(), buffer, sizeof(buffer), 0);
    if (got > 0) {
      launcher.reader.append(std::string_view(buffer, static_cast<std::size_t>(got)));
      continue;
    }
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 && errno == EAGAIN) break;
    throw util::SystemError(fmt::format("the service closed node {}'s connection before its World{}",
                                  launcher.join.node_rank,
                                  got < 0 ? fmt::format(" ({})", std::strerror(errno)) : ""));
  }
  bool world = false;
  while (auto frame = launcher.reader.next()) world |= handle_frame(launcher, plan, std::move(*frame));
  return world;
}

// Connects every launcher of PLAN and drives them until each has its World.
ClientReport drive_launchers(const ClientPlan& plan, std::vector<SimulatedLauncher>& launchers) {
  ClientReport report;
  std::int64_t cpu_start = process_cpu_ns(RUSAGE_SELF);
  util::Fd epoll(::epoll_create1(EPOLL_CLOEXEC));
  if (!epoll) throw util::system_error("cannot create a client epoll", errno);
  for (std::size_t i = 0; i < launchers.size(); ++i)
    start_connect(launchers[i], epoll.get(), static_cast<std::uint32_t>(i), plan.port);
  epoll_event events[256];
  while (report.worlds < plan.count) {
    int ready = ::epoll_wait(epoll.get(), events, 256, util::millis_until(plan.deadline));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) throw util::system_error("client epoll_wait failed", errno);
    if (ready == 0)
      throw util::SystemError(fmt::format("only {} of this process's {} launchers had their World after the "
                                    "--timeout",
                                    report.worlds, plan.count));
    for (int i = 0; i < ready; ++i) {
      auto& launcher = launchers[events[i].data.u32];
      if (launcher.has_world) continue;  // later heartbeats or the close need nothing
      if (on_readable(launcher, plan)) {
        launcher.has_world = true;
        report.last_world_ns = now_ns();
        if (report.worlds++ == 0) report.first_world_ns = report.last_world_ns;
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

// The body of one forked client process. It prepares everything, says it
// is ready, waits for the release (EOF on GO), runs, reports, then keeps its
// connections open until QUIT closes, so no launcher leaves while the
// service still counts on it.
[[noreturn]] void client_process(const ClientPlan& plan, int ready_fd, int go_fd, int report_fd, int quit_fd) {
  std::vector<SimulatedLauncher> launchers;
  ClientReport report;
  std::string error;
  try {
    launchers = prepare_launchers(plan);
    char byte = 'r';
    if (!util::write_all(ready_fd, std::string_view(&byte, 1))) ::_exit(3);
    while (util::read_retrying(go_fd, &byte, 1) > 0) {
    }
    report = drive_launchers(plan, launchers);
  } catch (const std::exception& caught) {
    error = caught.what();
  }
  write_report(report_fd, report, error);
  char byte = 0;
  while (util::read_retrying(quit_fd, &byte, 1) > 0) {
  }
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
  util::Pipe report = util::make_pipe();  // clients -> service: ClientReport
  util::Pipe quit = util::make_pipe();    // closed by the service: you may exit
};

struct RunResult {
  double ms = 0;                // service start to the last World
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
      pipes.report.read_end.reset();
      pipes.quit.write_end.reset();
      client_process(plan, pipes.ready.write_end.get(), pipes.go.read_end.get(),
                     pipes.report.write_end.get(), pipes.quit.read_end.get());
    }
    clients.add(pid);
  }
  pipes.ready.write_end.reset();
  pipes.go.read_end.reset();
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
  std::int64_t first_world_ns = 0;
  std::int64_t last_world_ns = 0;
  std::int64_t clients_cpu_ns = 0;
};

// Collects every client process's report and checks it: all launchers got
// the right World, or the run is an error, not a figure.
Collected collect_reports(RunPipes& pipes, const ClientGroup& clients, int n,
                          util::Clock::time_point deadline) {
  Collected collected;
  collected.first_world_ns = INT64_MAX;
  int worlds = 0;
  std::string errors;
  for (std::size_t c = 0; c < clients.size(); ++c) {
    ClientReport report;
    read_exactly(pipes.report.read_end.get(), &report, sizeof(report), deadline, "the clients' reports");
    if (report.error[0] != '\0') errors += fmt::format("\n  {}", report.error);
    worlds += report.worlds;
    if (report.worlds > 0) collected.first_world_ns = std::min(collected.first_world_ns, report.first_world_ns);
    collected.last_world_ns = std::max(collected.last_world_ns, report.last_world_ns);
    collected.clients_cpu_ns += report.cpu_ns;
  }
  if (!errors.empty()) throw util::SystemError(fmt::format("N = {}: the clients failed:{}", n, errors));
  if (worlds != n)
    throw util::SystemError(fmt::format("N = {}: {} launchers got their World, not {}", n, worlds, n));
  return collected;
}

RunResult run_once(int n, const Options& options, const std::string& token) {
  util::Fd listener = util::listen_tcp(0);
  ClientPlan plan;
  plan.port = util::bound_port(listener.get());
  plan.token = token;
  plan.nnodes = n;
  plan.nproc = options.nproc;
  plan.deadline = util::Clock::now() + std::chrono::seconds(options.timeout_s);
  RunPipes pipes;
  ClientGroup clients;
  fork_clients(clients, pipes, listener, plan, std::min(options.processes, n));
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
  auto log = std::make_shared<std::vector<std::string>>();  // written by the service's thread only
  settings.log = [log](const std::string& message) { log->push_back(message); };

  ::malloc_trim(0);  // what earlier runs freed does not hide this run's growth
  bool peak_reset = reset_peak_rss();
  auto rss_start = status_kib("VmRSS");
  std::int64_t cpu_start = process_cpu_ns(RUSAGE_SELF);
  std::int64_t start_ns = now_ns();
  auto server = std::make_unique<rendezvous::RendezvousServer>(std::move(listener), settings);
  pipes.go.write_end.reset();  // releases every client at once

  RunResult result;
  Collected collected;
  try {
    collected = collect_reports(pipes, clients, n, plan.deadline);
  } catch (...) {
    server.reset();  // joins the service's thread, so its log can be read
    for (std::size_t i = 0; i < log->size() && i < 5; ++i)
      fmt::print(stderr, "  service log: {}\n", (*log)[i]);
    throw;
  }
  result.ms = static_cast<double>(collected.last_world_ns - start_ns) / 1e6;
  result.fanout_ms = static_cast<double>(collected.last_world_ns - collected.first_world_ns) / 1e6;
  result.service_cpu_ms = static_cast<double>(process_cpu_ns(RUSAGE_SELF) - cpu_start) / 1e6;
  result.clients_cpu_ms = static_cast<double>(collected.clients_cpu_ns) / 1e6;
  auto peak = status_kib(peak_reset ? "VmHWM" : "VmRSS");
  if (peak && rss_start) result.rss_growth_kib = *peak - *rss_start;

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
  fmt::print(stderr, "  N={:<5} run {}/{}: {:9.2f} ms (World fan-out {:6.2f} ms)  service CPU {:7.1f} ms  "
                     "clients CPU {:7.1f} ms  service peak RSS +{}\n",
             n, run, runs, result.ms, result.fanout_ms, result.service_cpu_ms, result.clients_cpu_ms,
             result.rss_growth_kib ? fmt::format("{:.2f} MiB", static_cast<double>(*result.rss_growth_kib) / 1024)
                                   : std::string("?"));
}

// One tab-separated line for N: N, median ms, min ms, the largest service
// RSS growth (KiB, -1 unknown), median service and clients CPU ms, median
// World fan-out ms.
void print_summary(int n, const std::vector<RunResult>& runs) {
  std::vector<double> ms, service_cpu, clients_cpu, fanout;
  long growth = -1;
  for (const auto& run : runs) {
    ms.push_back(run.ms);
    service_cpu.push_back(run.service_cpu_ms);
    clients_cpu.push_back(run.clients_cpu_ms);
    fanout.push_back(run.fanout_ms);
    if (run.rss_growth_kib) growth = std::max(growth, *run.rss_growth_kib);
  }
  fmt::print("{}\t{:.3f}\t{:.3f}\t{}\t{:.1f}\t{:.1f}\t{:.3f}\n", n, median(ms),
             *std::min_element(ms.begin(), ms.end()), growth, median(service_cpu), median(clients_cpu),
             median(fanout));
  std::fflush(stdout);
}

int run_benchmark(const Options& options) {
  int largest = *std::max_element(options.sizes.begin(), options.sizes.end());
  raise_descriptor_limit(largest, options.processes);
  warn_about_kernel_limits(largest);
  std::string token = rendezvous::generate_token();  // as dlaunch submit gives a job
  fmt::print(stderr, "rendezvous_scale: {} client processes, {} workers per node, {} runs per N (+1 "
                     "untimed warm-up)\n",
             options.processes, options.nproc, options.runs);
  run_once(options.sizes.front(), options, token);  // warm-up: first-use costs (libraries, RNG)
  fmt::print("# N\tmedian_ms\tmin_ms\tservice_rss_growth_kib\tservice_cpu_ms\tclients_cpu_ms\tfanout_ms\n");
  for (int n : options.sizes) {
    std::vector<RunResult> runs;
    for (int run = 1; run <= options.runs; ++run) {
      runs.push_back(run_once(n, options, token));
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

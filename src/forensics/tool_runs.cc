#include "forensics/tool_runs.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <optional>
#include <thread>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/exit_codes.h"
#include "util/fd.h"
#include "util/program_spawn.h"

namespace dlaunch::forensics {
namespace {

// The tool is our child, but a launcher's own reaper (the supervisor's
// SIGCHLD handler reaps every child) may have taken its status first:
// then ECHILD, and the code stays unknown (-1). nullopt: still running.
std::optional<int> reap(pid_t pid, bool wait) {
  int status = 0;
  pid_t got;
  while ((got = ::waitpid(pid, &status, wait ? 0 : WNOHANG)) < 0 && errno == EINTR) {
  }
  if (got == 0) return std::nullopt;
  return got == pid ? util::exit_code_of_wait_status(status) : -1;
}

}  // namespace

ToolRuns::ToolRuns(std::size_t max_running, KeptOutput kept)
    : max_running_(max_running > 0 ? max_running : std::max(2U, std::thread::hardware_concurrency())), kept_(kept) {}

ToolRuns::~ToolRuns() {
  for (auto& running : running_) {
    if (running.pipe >= 0) ::close(running.pipe);
    ::kill(-running.pid, SIGKILL);
    reap(running.pid, true);
  }
}

void ToolRuns::start(ToolRequest request) {
  if (running_.size() >= max_running_) {
    waiting_.push_back(std::move(request));
    return;
  }
  launch(std::move(request));
}

void ToolRuns::launch(ToolRequest request) {
  Running running;
  running.deadline = std::chrono::steady_clock::now() + request.timeout;
  util::Pipe pipe = util::make_pipe();
  // Its own group, so a tool killed at its deadline takes its children along,
  // and a signal meant for the launcher's console (Ctrl-C) does not reach it.
  util::SpawnedProgram spawned = util::spawn_program(
      {request.argv, request.environment, false, pipe.write_end.get(), pipe.write_end.get(), true});
  running.pid = spawned.pid;
  int error = spawned.error;
  running.request = std::move(request);
  if (error != 0) {
    running.result.exit_code = util::kExitCannotRun;
    running.result.output = fmt::format("cannot run {}: {}", running.request.argv[0], std::strerror(error));
    auto on_done = std::move(running.request.on_done);
    if (on_done) on_done(running.result);
    return;
  }
  ::fcntl(pipe.read_end.get(), F_SETFL, O_NONBLOCK);
  running.pipe = pipe.read_end.release();
  running_.push_back(std::move(running));
}

void ToolRuns::read_some(Running& running) {
  char buffer[16384];
  ssize_t got;
  while ((got = ::read(running.pipe, buffer, sizeof(buffer))) > 0) {
    if (kept_ == KeptOutput::kTail) {
      std::string& output = running.result.output;
      output.append(buffer, static_cast<std::size_t>(got));
      if (output.size() > kOutputCap) {
        output.erase(0, output.size() - kOutputCap);
        running.result.truncated = true;
      }
      continue;
    }
    std::size_t room = kOutputCap - std::min(kOutputCap, running.result.output.size());
    std::size_t keep = std::min(room, static_cast<std::size_t>(got));
    running.result.output.append(buffer, keep);
    running.result.truncated |= keep < static_cast<std::size_t>(got);
  }
  if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR)) {
    ::close(running.pipe);
    running.pipe = -1;
  }
}

void ToolRuns::finish(std::size_t index, std::optional<int> exit_code) {
  Running running = std::move(running_[index]);
  running_.erase(running_.begin() + static_cast<std::ptrdiff_t>(index));
  if (running.pipe >= 0) ::close(running.pipe);
  if (!exit_code) {  // past its deadline
    ::kill(-running.pid, SIGKILL);
    running.result.timed_out = true;
    exit_code = reap(running.pid, true);
  }
  running.result.exit_code = *exit_code;
  if (running.request.on_done) running.request.on_done(running.result);
  // A slot is free (unless on_done took it): the next in line.
  while (!waiting_.empty() && running_.size() < max_running_) {
    ToolRequest next = std::move(waiting_.front());
    waiting_.pop_front();
    launch(std::move(next));
  }
}

void ToolRuns::run(const std::function<void()>& tick) {
  while (!running_.empty() || !waiting_.empty()) {
    if (tick) tick();
    if (running_.empty()) {  // cannot stay so: launch() or its failure moves the line on
      ToolRequest next = std::move(waiting_.front());
      waiting_.pop_front();
      launch(std::move(next));
      continue;
    }
    std::vector<pollfd> fds;
    auto soonest = running_.front().deadline;
    bool closed_but_running = false;  // its exit is not an event poll sees
    for (const auto& running : running_) {
      fds.push_back({running.pipe, POLLIN, 0});
      soonest = std::min(soonest, running.deadline);
      closed_but_running |= running.pipe < 0;
    }
    auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(
                    soonest - std::chrono::steady_clock::now()).count() + 1;
    if (closed_but_running) wait = std::min<long long>(wait, 10);
    if (tick) wait = std::min<long long>(wait, kTickEvery.count());
    int ready = ::poll(fds.data(), fds.size(), static_cast<int>(std::max<long long>(0, wait)));
    if (ready < 0 && errno != EINTR) break;
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].fd >= 0 && fds[i].revents != 0) read_some(running_[i]);
    }
    // Backwards: finish() removes, and may append new requests at the end.
    auto now = std::chrono::steady_clock::now();
    for (std::size_t i = fds.size(); i-- > 0;) {
      if (running_[i].pipe < 0) {
        if (auto code = reap(running_[i].pid, false)) {
          finish(i, code);
          continue;
        }
      }
      if (now >= running_[i].deadline) finish(i, std::nullopt);
    }
  }
}

}  // namespace dlaunch::forensics

// Running one ssh session per host for the job's life, and ending them.
//
// Each session's stdin is a pipe: its first line is the rendezvous secret,
// and it stays open until the job ends, so closing it (a "hang-up") tells
// that host's dlaunch run to stop its workers (--stop-on-stdin-close). The
// output of every host comes back through one epoll loop and is written in
// whole lines, so hosts never interleave mid-line. When one session ends
// badly, or dlaunch ssh is told to stop, every other host is hung up, then
// its ssh is sent SIGTERM, then SIGKILL, each after a grace period.
//
// The job ends when its verdict is in: the launcher that speaks for the job
// says it in an authenticated line (launch/verdict_line.h). Hosts that have
// not ended verdict_grace later (frozen, cut off, powered off: their
// sessions never end by themselves) are hung up, and dlaunch ssh exits with
// the verdict's code.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <functional>
#include <string_view>

#include "launch/verdict_line.h"
#include "process/signal_channel.h"
#include "util/console.h"

namespace dlaunch::ssh {

struct Session {
  std::string host;
  int node_rank = 0;
  std::vector<std::string> argv;  // the ssh command
};

struct SessionSettings {
  std::string first_line;                    // written to every session's stdin first
  std::optional<std::string> host_log_dir;   // DIR/HOST.log instead of the console
  std::chrono::milliseconds grace{45'000};   // from hang-up to SIGTERM of the ssh processes
  // Where output and messages go; null: the process's console_out() /
  // console_err(), which never block on a stalled reader (util/console.h).
  util::ConsoleSink* console_stdout = nullptr;
  util::ConsoleSink* console_stderr = nullptr;
  // The job outlives a host (spare nodes, --min-nodes): a session that ends
  // early does not stop the others; the rendezvous replaces its node.
  bool hosts_replaceable = false;
  // Reads a line of a host's launcher (its stderr) as the job's verdict;
  // null: no verdict is looked for.
  std::function<std::optional<launch::AnnouncedVerdict>(std::string_view line)> read_verdict;
  // After the verdict, how long the other hosts have to end by themselves.
  std::chrono::milliseconds verdict_grace{5'000};
};

// Runs SESSIONS to the end and returns the job's exit code: the verdict's
// when a host announced it; else node 0's, as every host's dlaunch run
// agrees on one; when node 0's ssh itself failed, the first other host's
// code; 128+N when dlaunch ssh was stopped by signal N. Throws SystemError
// when ssh cannot be started.
int run_sessions(const std::vector<Session>& sessions, const SessionSettings& settings,
                 process::SignalChannel& signals);

}  // namespace dlaunch::ssh

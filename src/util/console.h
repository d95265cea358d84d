// The process's console: writes to stdout or stderr that never wait for
// the reader, through a bounded backlog, from any thread.
//
// A console that nobody reads (a stalled srun or ssh I/O path, a stopped
// terminal, a slow log pipe) must not stop the program that writes to it:
// the loop that writes worker output also sends heartbeats and reads
// signals. A ConsoleSink never waits. What the console does not take at once
// waits in a backlog, written when the console has room again (an event
// loop watches watch_fd() for EPOLLOUT while backlogged(); every later
// write tries too). What happens when the backlog reaches its capacity is
// the overflow policy:
//   kBlock (the default)  nothing is dropped: the sink reports full(), and
//                         whoever feeds it stops reading its sources (the
//                         workers' pipes) until it has_room() again, so the
//                         writers wait as on a slow terminal. The backlog
//                         passes the capacity only by what was read before
//                         full() was asked.
//   kDrop                 whole lines are dropped and counted, never half
//                         lines, and a notice takes their place once the
//                         console drains.
// A console that breaks (EPIPE, EIO: nobody will ever read it) drops every
// line under both, counted.
//
// A line shown before its end (a progress bar, a prompt) stays open on the
// console for its owner (write_owned); any other write ends it first with a
// newline, so the owner's next part starts a fresh line.
//
// How it writes without waiting, without touching the descriptor's flags
// (O_NONBLOCK belongs to the open file description, which the sink shares
// with whoever else holds the same console: the user's shell, srun):
//   pipes, FIFOs, terminals  reopened through /proc/self/fd/N with
//                            O_NONBLOCK: a description of the sink's own
//   sockets                  send(MSG_DONTWAIT)
//   regular files, block     plain writes: a file does not stall on a
//   devices                  reader (and a reopened one would start at
//                            offset 0)
//   what cannot be reopened  poll() for room without waiting, then at most
//                            PIPE_BUF bytes per write (a pipe with room
//                            takes that much whole)
// A batch that the console takes at once goes out in one write.
//
// Every member function is thread-safe: node 0's rendezvous thread logs
// through the same sink as the launcher's event loop, and each call leaves
// whole lines, so lines of different threads never interleave mid-line.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <sys/types.h>

#include "util/fd.h"

namespace dlaunch::util {

// Lines a console dropped because it was stalled (or broken).
struct ConsoleDrops {
  std::uint64_t filed = 0;    // the writer said a file has them too
  std::uint64_t unfiled = 0;  // nowhere else
  std::uint64_t total() const { return filed + unfiled; }
};

enum class ConsoleOverflow { kBlock, kDrop };

// Text for the console from the owner of a line that may be open there:
// CONTINUED when the owner's line is still open (nobody wrote since), FRESH
// when it starts on a line of its own.
struct OwnedText {
  std::string_view continued;
  std::string_view fresh;
};

class ConsoleSink {
 public:
  // The backlog's bound for lines written with write_lines().
  static constexpr std::size_t kDefaultCapacity = 1 << 20;
  // Extra room for write_message(), so a program's own words (a failure
  // summary) are not crowded out by the lines it relays.
  static constexpr std::size_t kMessageReserve = 256 << 10;

  // A sink writing to FD, which it neither owns nor changes. A descriptor
  // that is not open makes a broken sink (every line counted as dropped).
  explicit ConsoleSink(int fd, std::size_t capacity = kDefaultCapacity);
  ConsoleSink(const ConsoleSink&) = delete;
  ConsoleSink& operator=(const ConsoleSink&) = delete;

  // Writes LINES, one or more whole lines (each ending in '\n'), without
  // waiting. Under kDrop, what neither the console nor the backlog takes is
  // dropped in whole lines and counted: FILED says whether a file has those
  // lines too. The rest of a line the console took only in part is always
  // kept.
  void write_lines(std::string_view lines, bool filed);
  // Writes TEXT for OWNER's line, which stays open on the console unless
  // TEXT ends it (ENDS_LINE: its last byte is '\n'); otherwise as
  // write_lines().
  void write_owned(const void* owner, OwnedText text, bool ends_line, bool filed);
  // Writes TEXT, one or more lines of the program's own (a '\n' is added
  // when the last one lacks it), like write_lines() but with the message
  // reserve on top of the capacity (under kBlock, on top of four times the
  // capacity: messages are dropped, counted, only behind a console stalled
  // for good). Never waits.
  void write_message(std::string_view text);

  // Writes as much of the backlog as the console takes now.
  void flush();
  // Writes the backlog, waiting for the console until DEADLINE at the
  // latest. True when nothing is left.
  bool drain(std::chrono::steady_clock::time_point deadline);
  // Gives up on the backlog (at exit, after drain()); its lines count as
  // unwritten. Later writes are tried as usual.
  void abandon();

  void set_overflow(ConsoleOverflow overflow);
  ConsoleOverflow overflow() const;
  // kBlock: the backlog has reached the capacity; stop feeding the sink.
  bool full() const;
  // kBlock: a fed sink that was full() has room again (its backlog is down
  // to half the capacity, so that feeding resumes in long runs); always
  // under kDrop or once broken.
  bool has_room() const;
  std::size_t backlog_bytes() const;

  bool backlogged() const;
  // What to watch for EPOLLOUT while backlogged(); -1 when nothing can be
  // watched (regular files, which epoll refuses, never have a backlog).
  int watch_fd() const;

  ConsoleDrops dropped() const;           // in all, since the sink was made
  ConsoleDrops unwritten() const;         // given up by abandon()
  // The errno that broke the console (EPIPE: nobody reads it any more);
  // 0 while it works. A broken console drops every line.
  int error() const;

  // NOTICE makes the line written in place of the dropped lines when the
  // console drains after a stall; it gets the lines dropped since the
  // previous notice and runs under the sink's lock, so it must not use the
  // sink. Without one the line is "console stalled, N lines dropped".
  void set_drop_notice(std::function<std::string(const ConsoleDrops&)> notice);

  // Whether FD reaches the same pipe, socket or terminal as this sink, so
  // one sink should serve both (their lines would tear each other).
  bool same_stream(int fd) const;

 private:
  enum class Mode { kFile, kReopened, kSocket, kPolled, kBroken };
  struct Segment {
    std::string bytes;
    std::size_t sent = 0;
    bool filed = false;
  };

  // No bound on the backlog (kBlock: the feeder stops at full()).
  static constexpr std::size_t kUnbounded = static_cast<std::size_t>(-1);
  // Under kBlock, messages are kept until the backlog reaches this many
  // capacities (plus the reserve).
  static constexpr std::size_t kBlockedMessageRoom = 4;

  void write_locked(std::string_view text, bool filed, std::size_t limit);
  std::size_t lines_limit_locked() const;
  std::size_t messages_limit_locked() const;
  void end_open_line_locked();
  void note_accepted(std::string_view accepted);
  void enqueue_locked(std::string_view lines, bool filed, std::size_t limit);
  void flush_locked();
  void write_notice_locked();
  void break_locked(int error);
  void count_dropped(std::string_view lines, bool filed);
  WriteResult write_some(std::string_view data);
  WriteResult write_polled(std::string_view data);
  WriteResult send_some(std::string_view data);
  int watch_fd_locked() const;

  mutable std::mutex mutex_;
  int fd_;
  Fd reopened_;  // the sink's own non-blocking description (Mode::kReopened)
  Mode mode_ = Mode::kBroken;
  dev_t device_ = 0;
  ino_t inode_ = 0;
  std::size_t capacity_;
  std::deque<Segment> backlog_;
  std::size_t backlog_bytes_ = 0;  // not yet written
  ConsoleDrops dropped_;
  ConsoleDrops since_notice_;
  ConsoleDrops unwritten_;
  int error_ = 0;
  std::function<std::string(const ConsoleDrops&)> notice_;
  ConsoleOverflow overflow_ = ConsoleOverflow::kBlock;
  const void* open_owner_ = nullptr;  // whose line the console shows in part
  bool mid_line_ = false;             // the last byte taken or kept was not '\n'
};

// The process's stdout and stderr, made on first use and never destroyed
// (a thread may log until the very end). When both reach the same pipe,
// socket or terminal (2>&1), they are one sink, so that a line of one never
// lands in the middle of a line of the other.
ConsoleSink& console_out();
ConsoleSink& console_err();

}  // namespace dlaunch::util

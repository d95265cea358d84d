#include "process/child_output.h"

#include <sys/ioctl.h>

#include <cerrno>
#include <string_view>

namespace dlaunch::process {
namespace {

// Bytes waiting in the pipe whose read end is FD (0 when it cannot tell).
int unread_bytes(int fd) {
  int bytes = 0;
  if (::ioctl(fd, FIONREAD, &bytes) != 0) return 0;
  return bytes;
}

}  // namespace

ChildOutput::ChildOutput(const std::string& prefix, StreamRelay::Outputs out,
                         StreamRelay::Outputs err) {
  StreamRelay::Outputs* outputs[2] = {&out, &err};
  for (int stream = 0; stream < 2; ++stream) {
    outputs[stream]->tail = &tail_;
    relays_[stream] = std::make_unique<StreamRelay>(prefix, std::move(*outputs[stream]));
  }
}

ChildOutput::~ChildOutput() {
  if (loop_ == nullptr) return;
  for (int stream = 0; stream < 2; ++stream) {
    if (pipes_[stream]) loop_->unwatch(pipes_[stream].get());
    loop_->cancel(partial_timers_[stream]);
  }
}

void ChildOutput::relay(EventLoop& loop, util::Fd stdout_pipe, util::Fd stderr_pipe, std::span<char> buffer,
                        std::function<void()> on_closed) {
  loop_ = &loop;
  buffer_ = buffer;
  on_closed_ = std::move(on_closed);
  pipes_[0] = std::move(stdout_pipe);
  pipes_[1] = std::move(stderr_pipe);
  for (int stream = 0; stream < 2; ++stream) watch(stream);
}

void ChildOutput::watch(int stream) {
  loop_->watch(pipes_[stream].get(), EPOLLIN, [this, stream](std::uint32_t) { on_readable(stream); });
}

// One read per event: a chatty child cannot hold the loop.
void ChildOutput::on_readable(int stream) {
  // Asked before the read, so a full console gets at most one more chunk.
  if (relays_[stream]->console_full()) return hold_back(stream);
  ssize_t got = util::read_retrying(pipes_[stream].get(), buffer_.data(), buffer_.size());
  if (got > 0) {
    relays_[stream]->feed(std::string_view(buffer_.data(), static_cast<std::size_t>(got)));
    follow_partial(stream);
    if (on_output_) on_output_();
    return;
  }
  if (got < 0 && errno == EAGAIN) return;
  close(stream);
}

// Unwatched rather than watched for nothing: a pipe whose writer closed
// reports EPOLLHUP whatever it is watched for, which would wake the loop
// endlessly.
void ChildOutput::hold_back(int stream) {
  loop_->unwatch(pipes_[stream].get());
  held_back_[stream] = true;
}

void ChildOutput::resume_if_room() {
  for (int stream = 0; stream < 2; ++stream) {
    if (!held_back_[stream] || !pipes_[stream] || !relays_[stream]->console_has_room()) continue;
    held_back_[stream] = false;
    watch(stream);
    follow_partial(stream);  // a line left in part while held back is shown once due
  }
}

// A line held in part is shown when due; one deadline per stream at most.
void ChildOutput::follow_partial(int stream) {
  if (partial_timers_[stream] || held_back_[stream]) return;
  auto due = relays_[stream]->partial_due();
  if (!due) return;
  partial_timers_[stream] = loop_->at(*due, [this, stream] { on_partial_due(stream); });
}

// The line's start is shown only when the child paused mid-line. Not while
// its pipe is held back or holds more (the child is writing, and the next
// read likely ends the line): a log line cut by a chunk's end would
// otherwise show in two pieces whenever the console is slow. The read, or
// the resume, arms the deadline again.
void ChildOutput::on_partial_due(int stream) {
  partial_timers_[stream] = EventLoop::Timer();
  if (held_back_[stream] || !pipes_[stream] || unread_bytes(pipes_[stream].get()) > 0) return;
  auto due = relays_[stream]->partial_due();
  if (!due) return;
  if (*due > EventLoop::Clock::now()) return follow_partial(stream);  // the line changed since
  relays_[stream]->show_partial();
}

void ChildOutput::drain_and_close() {
  for (int stream = 0; stream < 2; ++stream) {
    if (!pipes_[stream]) continue;
    util::set_nonblocking(pipes_[stream].get());
    ssize_t got;
    while ((got = util::read_retrying(pipes_[stream].get(), buffer_.data(), buffer_.size())) > 0)
      relays_[stream]->feed(std::string_view(buffer_.data(), static_cast<std::size_t>(got)));
    close(stream);
  }
}

void ChildOutput::close(int stream) {
  if (!pipes_[stream]) return;
  relays_[stream]->finish();
  loop_->cancel(partial_timers_[stream]);
  held_back_[stream] = false;
  loop_->unwatch(pipes_[stream].get());
  pipes_[stream].reset();
  if (on_closed_) on_closed_();
}

}  // namespace dlaunch::process

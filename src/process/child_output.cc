#include "process/child_output.h"

#include <cerrno>
#include <string_view>

namespace dlaunch::process {

ChildOutput::ChildOutput(const std::string& prefix, StreamRelay::Outputs out,
                         StreamRelay::Outputs err) {
  StreamRelay::Outputs* outputs[2] = {&out, &err};
  for (int stream = 0; stream < 2; ++stream) {
    outputs[stream]->tail = &tail_;
    relays_[stream] = std::make_unique<StreamRelay>(prefix, std::move(*outputs[stream]));
  }
}

ChildOutput::~ChildOutput() {
  for (const util::Fd& pipe : pipes_) {
    if (pipe && loop_ != nullptr) loop_->unwatch(pipe.get());
  }
}

void ChildOutput::relay(EventLoop& loop, util::Fd stdout_pipe, util::Fd stderr_pipe, std::span<char> buffer,
                        std::function<void()> on_closed) {
  loop_ = &loop;
  buffer_ = buffer;
  on_closed_ = std::move(on_closed);
  pipes_[0] = std::move(stdout_pipe);
  pipes_[1] = std::move(stderr_pipe);
  for (int stream = 0; stream < 2; ++stream)
    loop.watch(pipes_[stream].get(), EPOLLIN, [this, stream](std::uint32_t) { on_readable(stream); });
}

// One read per event: a chatty child cannot hold the loop.
void ChildOutput::on_readable(int stream) {
  ssize_t got = util::read_retrying(pipes_[stream].get(), buffer_.data(), buffer_.size());
  if (got > 0) {
    relays_[stream]->feed(std::string_view(buffer_.data(), static_cast<std::size_t>(got)));
    if (on_output_) on_output_();
    return;
  }
  if (got < 0 && errno == EAGAIN) return;
  close(stream);
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
  loop_->unwatch(pipes_[stream].get());
  pipes_[stream].reset();
  if (on_closed_) on_closed_();
}

}  // namespace dlaunch::process

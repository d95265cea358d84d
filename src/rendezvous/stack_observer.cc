#include "rendezvous/stack_observer.h"

#include <fmt/format.h>

#include "process/link_wait.h"
#include "rendezvous/service_dialer.h"
#include "util/error.h"
#include "util/ports.h"
#include "util/socket.h"
#include "wire/protocol.h"

namespace dlaunch::rendezvous {
namespace {

// More workers than any job has: a node 0 that sends without end is cut off.
constexpr std::size_t kMostWorkers = 1 << 16;

std::string where(const ObserveSettings& settings) {
  return fmt::format("{}:{}", settings.master_addr, settings.port);
}

}  // namespace

Observed observe_stacks(const ObserveSettings& settings, process::SignalChannel& signals) {
  auto deadline = util::Clock::now() + settings.timeout;
  DialSettings dial;
  dial.master_addr = settings.master_addr;
  dial.port = settings.port;
  dial.token = settings.token;
  dial.rendezvous_timeout = std::min<std::chrono::milliseconds>(settings.timeout, std::chrono::seconds(10));
  dial.notice = [](const std::string&) {};  // the final error says what was seen
  ServiceDialer dialer(dial, signals);
  JoinMessage join;
  join.observer = true;
  join.run_id = settings.run_id;
  join.host = util::local_host_name();
  join.dlaunch_version = DLAUNCH_VERSION;
  Dialed dialed = [&] {
    try {
      return dialer.dial(join, util::Clock::now() + dial.rendezvous_timeout);
    } catch (const util::SystemError& error) {
      throw util::SystemError(fmt::format("no rendezvous answered at {}: {}. Is the job still running?",
                                          where(settings), error.what()));
    }
  }();
  ServiceLink& link = dialed.link;
  auto beat = heartbeat_interval(dialed.heartbeat_timeout.count() > 0 ? dialed.heartbeat_timeout
                                                                      : kDefaultHeartbeatTimeout);
  Observed observed;
  for (;;) {
    while (auto frame = link.next()) {
      switch (frame->type) {
        case MessageType::kStacks: {
          auto message = decode_stacks(frame->payload);
          for (auto& worker : forensics::decode_worker_stacks(message.stacks)) {
            if (observed.workers.size() >= kMostWorkers)
              throw util::ProtocolError(fmt::format("{} sent stacks of more than {} workers", where(settings), kMostWorkers));
            observed.workers.push_back(std::move(worker));
          }
          break;
        }
        case MessageType::kStacksEnd: observed.headline = decode_text(frame->payload).reason; return observed;
        case MessageType::kAbort:
          throw util::SystemError(fmt::format("node 0 ({}) refused: {}", where(settings), decode_text(frame->payload).reason));
        default: break;  // heartbeats are taken by the link; nothing else is for an observer
      }
    }
    auto now = util::Clock::now();
    if (now >= deadline)
      throw util::SystemError(fmt::format("node 0 ({}) sent no complete report within {} s", where(settings),
                                          std::chrono::duration_cast<std::chrono::seconds>(settings.timeout).count()));
    if (now - link.last_sent() >= beat && !link.send(MessageType::kHeartbeat, ""))
      throw util::SystemError(fmt::format("node 0 ({}) closed the connection", where(settings)));
    auto woke = process::wait_for_link(link.fd(), link.has_backlog(), signals, std::min(deadline, link.last_sent() + beat));
    if (woke.writable) link.flush();
    if (woke.readable && !link.receive()) {
      if (auto frame = link.next()) {  // its last word before closing
        if (frame->type == MessageType::kAbort)
          throw util::SystemError(fmt::format("node 0 ({}) refused: {}", where(settings), decode_text(frame->payload).reason));
      }
      throw util::SystemError(fmt::format("node 0 ({}) closed the connection before the report was complete",
                                          where(settings)));
    }
  }
}

}  // namespace dlaunch::rendezvous

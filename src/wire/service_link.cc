#include "wire/service_link.h"

namespace dlaunch::rendezvous {

ServiceLink::ServiceLink(PeerConnection connection, Session session, std::string address)
    : connection_(std::move(connection)), session_(std::move(session)), address_(std::move(address)),
      last_sent_(util::Clock::now()) {
  connection_.set_max_payload(kMaxPayload);
}

bool ServiceLink::send(MessageType type, std::string_view payload) {
  last_sent_ = util::Clock::now();
  return connection_.send(session_.frame(type, payload, generation_), last_sent_);
}

std::optional<Frame> ServiceLink::next() {
  for (;;) {
    auto frame = connection_.next_frame();
    if (!frame) return std::nullopt;
    // Every frame is opened, heartbeats too: their tags keep the counter in step.
    frame->payload = session_.open(*frame);
    if (frame->type != MessageType::kHeartbeat) return frame;
    decode_heartbeat(frame->payload);
  }
}

}  // namespace dlaunch::rendezvous

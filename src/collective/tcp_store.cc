#include "collective/tcp_store.h"

#include <cerrno>
#include <fmt/format.h>
#include <map>
#include <memory>
#include <poll.h>
#include <sys/socket.h>

#include "process/event_loop.h"
#include "util/error.h"
#include "util/socket.h"
#include "util/strings.h"

namespace dlaunch::collective {
namespace {

// Wire format, both ways: op (1 byte), key length (u32), key, value length
// (u32), value. Ops: 'S' set (reply 'K'), 'G' get (reply 'V' with the value
// once the key exists), 'C' contains (reply 'V' with "1" or "0" at once). Lengths are capped so garbage cannot make the
// server allocate without bound.
constexpr std::uint32_t kMaxField = 64 << 20;

void put_u32(std::string& out, std::uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>((value >> shift) & 0xff));
}

std::uint32_t get_u32(std::string_view bytes) {
  std::uint32_t value = 0;
  for (int i = 0; i < 4; ++i) value = (value << 8) | static_cast<unsigned char>(bytes[static_cast<std::size_t>(i)]);
  return value;
}

std::string encode(char op, const std::string& key, const std::string& value) {
  std::string out(1, op);
  put_u32(out, static_cast<std::uint32_t>(key.size()));
  out += key;
  put_u32(out, static_cast<std::uint32_t>(value.size()));
  out += value;
  return out;
}

struct Message {
  char op;
  std::string key;
  std::string value;
};

// Takes one whole message off the front of BUFFER; nullopt when incomplete.
// Throws ProtocolError-like SystemError on oversized fields.
std::optional<Message> take_message(std::string& buffer) {
  if (buffer.size() < 5) return std::nullopt;
  std::uint32_t key_size = get_u32(std::string_view(buffer).substr(1));
  if (key_size > kMaxField) throw util::SystemError("store message with an oversized key");
  if (buffer.size() < 9 + key_size) return std::nullopt;
  std::uint32_t value_size = get_u32(std::string_view(buffer).substr(5 + key_size));
  if (value_size > kMaxField) throw util::SystemError("store message with an oversized value");
  if (buffer.size() < 9 + key_size + value_size) return std::nullopt;
  Message message{buffer[0], buffer.substr(5, key_size), buffer.substr(9 + key_size, value_size)};
  buffer.erase(0, 9 + key_size + value_size);
  return message;
}

// What the store holds for one client that does not read: two answers of
// the largest value. Beyond it that client is dropped (it is not a gloo
// rank, or it is stuck), so one peer can neither stall the store nor make
// it buffer without bound.
constexpr std::size_t kMaxOutbox = 2 * (std::size_t{kMaxField} + 9);

}  // namespace

// One process::EventLoop on the store's thread: clients are read and
// written without blocking, each with its own outbox, so a client that
// stops reading delays no other (gloo's ranks wait on each other's keys).
class TcpStoreServer::Loop {
 public:
  explicit Loop(util::Fd listener) : listener_(std::move(listener)) {
    util::set_nonblocking(listener_.get());
    events_.watch(listener_.get(), EPOLLIN, [this](std::uint32_t) { accept_clients(); });
  }

  // On the store's thread, until stop().
  void run() {
    // Dropped clients are freed between batches, after the events that may still name them.
    events_.run_until([this] {
      std::erase_if(clients_, [](const auto& client) { return !client->fd; });
      return false;
    });
  }

  // From any thread: run() returns.
  void stop() { events_.stop(); }

 private:
  struct Client {
    util::Fd fd;
    std::string input;
    std::string outbox;
    bool writable_watched = false;
  };

  void accept_clients() {
    for (;;) {
      int fd = ::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (fd < 0) return;  // none left (EAGAIN), or out of descriptors: the next event retries
      auto client = std::make_unique<Client>(Client{util::Fd(fd), {}, {}});
      Client* raw = client.get();
      try {
        events_.watch(fd, EPOLLIN, [this, raw](std::uint32_t ready) { on_ready(*raw, ready); });
      } catch (const util::SystemError&) {
        continue;  // epoll refused it: closed, the others go on
      }
      clients_.push_back(std::move(client));
    }
  }

  void on_ready(Client& client, std::uint32_t ready) {
    if ((ready & EPOLLOUT) != 0) flush(client);
    if (client.fd && (ready & (EPOLLIN | EPOLLHUP | EPOLLERR)) != 0) read(client);
  }

  // One read per event: a chatty client cannot hold the loop.
  void read(Client& client) {
    char chunk[64 * 1024];
    ssize_t got = ::recv(client.fd.get(), chunk, sizeof(chunk), 0);
    if (got < 0 && (errno == EAGAIN || errno == EINTR)) return;
    if (got <= 0) return drop(client);
    client.input.append(chunk, static_cast<std::size_t>(got));
    try {
      while (client.fd) {
        auto message = take_message(client.input);
        if (!message) break;
        handle(client, *message);
      }
    } catch (const util::SystemError&) {
      drop(client);  // garbage: this peer is not one of ours
    }
  }

  void handle(Client& client, const Message& message) {
    if (message.op == 'S') {
      values_[message.key] = message.value;
      send(client, encode('K', message.key, ""));
      answer_waiters(message.key);
    } else if (message.op == 'C') {
      send(client, encode('V', message.key, values_.count(message.key) > 0 ? "1" : "0"));
    } else if (message.op == 'G') {
      auto found = values_.find(message.key);
      if (found != values_.end()) send(client, encode('V', message.key, found->second));
      else waiters_.emplace(message.key, &client);
    } else {
      drop(client);
    }
  }

  void answer_waiters(const std::string& key) {
    auto [first, last] = waiters_.equal_range(key);
    std::vector<Client*> waiting;
    for (auto it = first; it != last; ++it) waiting.push_back(it->second);
    waiters_.erase(first, last);
    for (Client* waiter : waiting) {
      if (waiter->fd) send(*waiter, encode('V', key, values_[key]));
    }
  }

  // Queued behind what the client has not taken yet, and written as far as
  // its socket takes now; the rest when the loop says it has room.
  void send(Client& client, std::string bytes) {
    if (client.outbox.size() + bytes.size() > kMaxOutbox) return drop(client);
    client.outbox += bytes;
    flush(client);
  }

  void flush(Client& client) {
    while (!client.outbox.empty()) {
      ssize_t sent = ::send(client.fd.get(), client.outbox.data(), client.outbox.size(), MSG_NOSIGNAL);
      if (sent < 0 && errno == EINTR) continue;
      if (sent < 0 && errno == EAGAIN) break;
      if (sent <= 0) return drop(client);
      client.outbox.erase(0, static_cast<std::size_t>(sent));
    }
    bool want = !client.outbox.empty();
    if (want == client.writable_watched) return;
    client.writable_watched = want;
    events_.set_events(client.fd.get(), want ? (EPOLLIN | EPOLLOUT) : EPOLLIN);
  }

  void drop(Client& client) {
    if (!client.fd) return;
    std::erase_if(waiters_, [&](const auto& waiter) { return waiter.second == &client; });
    events_.unwatch(client.fd.get());
    client.fd.reset();
  }

  process::EventLoop events_;
  util::Fd listener_;
  std::vector<std::unique_ptr<Client>> clients_;
  std::map<std::string, std::string> values_;
  std::multimap<std::string, Client*> waiters_;
};

TcpStoreServer::TcpStoreServer(int port)
    : loop_(std::make_unique<Loop>(util::listen_tcp(port))), thread_([this] { loop_->run(); }) {}

TcpStoreServer::~TcpStoreServer() {
  loop_->stop();
  thread_.join();
}

TcpStore::TcpStore(const std::string& host, int port, std::chrono::milliseconds timeout)
    : host_(host), port_(port), timeout_(timeout) {
  connect(timeout);
}

void TcpStore::connect(std::chrono::milliseconds timeout) {
  auto deadline = util::Clock::now() + timeout;
  std::chrono::milliseconds backoff(10);
  while (!(socket_ = util::try_connect_tcp(host_, port_, deadline))) {
    if (util::Clock::now() >= deadline)
      throw util::SystemError(fmt::format("cannot reach the store of rank 0 at {}:{} within {} s: rank 0 "
                                    "has not started or MASTER_ADDR/MASTER_PORT are wrong",
                                    host_, port_, timeout.count() / 1000));
    ::poll(nullptr, 0, static_cast<int>(backoff.count()));
    backoff = std::min(backoff * 2, std::chrono::milliseconds(500));
  }
}

bool TcpStore::contains(const std::string& key) { return request('C', key, "", timeout_) == "1"; }

std::string TcpStore::request(char op, const std::string& key, const std::string& value,
                              std::chrono::milliseconds timeout) {
  if (!socket_) connect(timeout_);
  if (!util::send_all(socket_.get(), encode(op, key, value), timeout))
    throw util::SystemError(fmt::format("lost the store of rank 0 at {}:{}", host_, port_));
  auto deadline = util::Clock::now() + timeout;
  std::string buffer;
  char chunk[64 * 1024];
  for (;;) {
    if (auto message = take_message(buffer)) return message->value;
    pollfd readable{socket_.get(), POLLIN, 0};
    int ready = ::poll(&readable, 1, util::millis_until(deadline));
    if (ready == 0) {
      // The answer may still come; a fresh connection keeps it from being
      // taken for the answer to a later request.
      socket_.reset();
      throw util::SystemError(fmt::format("timed out after {} s waiting for '{}' in the store: a rank "
                                    "did not arrive",
                                    timeout.count() / 1000, key));
    }
    ssize_t got = ::recv(socket_.get(), chunk, sizeof(chunk), 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) throw util::SystemError(fmt::format("lost the store of rank 0 at {}:{}", host_, port_));
    buffer.append(chunk, static_cast<std::size_t>(got));
  }
}

void TcpStore::set(const std::string& key, const std::vector<char>& data) {
  request('S', key, std::string(data.begin(), data.end()), timeout_);
}

std::vector<char> TcpStore::get(const std::string& key) { return get(key, timeout_); }

std::vector<char> TcpStore::get(const std::string& key, std::chrono::milliseconds timeout) {
  std::string value = request('G', key, "", timeout);
  return std::vector<char>(value.begin(), value.end());
}

void TcpStore::wait(const std::vector<std::string>& keys) { wait(keys, timeout_); }

void TcpStore::wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) {
  for (const auto& key : keys) request('G', key, "", timeout);
}

}  // namespace dlaunch::collective

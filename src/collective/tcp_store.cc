#include "collective/tcp_store.h"

#include <cerrno>
#include <fmt/format.h>
#include <map>
#include <memory>
#include <poll.h>
#include <sys/socket.h>

#include "collective/store_seal.h"
#include "process/event_loop.h"
#include "util/big_endian.h"
#include "util/error.h"
#include "util/socket.h"
#include "util/strings.h"
#include "wire/token.h"

namespace dlaunch::collective {
namespace {

// Wire format, both ways: op (1 byte), key length (u32), key, value length
// (u32), value. Ops: 'S' set (reply 'K'), 'G' get (reply 'V' with the value
// once the key exists), 'C' contains (reply 'V' with "1" or "0" at once).
// With a secret (collective/store_seal.h) the store first sends 'H' with
// its challenge as key, the client answers 'A' with its nonce as key and
// its proof as value, and every message after that, both ways, travels
// sealed; the store's first is 'K', its proof to the client.
// Lengths are capped so garbage cannot make the store allocate without
// bound; gloo's largest value is a rank's pair addresses (tens of bytes a
// rank), far below the cap.
constexpr std::uint32_t kMaxField = 16 << 20;
// What the store holds at the most, whoever writes: beyond either, the
// writer is dropped (it is not a gloo rank, or it is broken).
constexpr std::size_t kMostKeys = 1 << 16;
constexpr std::size_t kMostStoredBytes = std::size_t{256} << 20;
// What a client may send, and how long it may take, before it proved the
// secret: the 'A' message is 73 bytes.
constexpr std::size_t kMostUnprovenInput = 256;
constexpr std::chrono::seconds kProofTimeout{10};

using util::get_u32;
using util::put_u32;

std::string encode(char op, const std::string& key, const std::string& value) {
  std::string out(1, op);
  put_u32(out, static_cast<std::uint32_t>(key.size()));
  out += key;
  put_u32(out, static_cast<std::uint32_t>(value.size()));
  out += value;
  return out;
}

using Message = StoreMessage;

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
constexpr std::size_t kMaxOutbox = 2 * (std::size_t{kMaxField} + 64);

}  // namespace

// One process::EventLoop on the store's thread: clients are read and
// written without blocking, each with its own outbox, so a client that
// stops reading delays no other (gloo's ranks wait on each other's keys).
class TcpStoreServer::Loop {
 public:
  Loop(util::Fd listener, std::optional<std::string> secret)
      : listener_(std::move(listener)), secret_(std::move(secret)) {
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
    std::string input;  // as received
    std::string plain;  // opened, when sealed
    std::string outbox;
    bool writable_watched = false;
    std::string challenge;  // with a secret: what the client must prove it against
    bool proven = false;
    std::optional<StoreSeal> seal;
    process::EventLoop::Timer proof_deadline;
  };

  void accept_clients() {
    for (;;) {
      int fd = ::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (fd < 0) return;  // none left (EAGAIN), or out of descriptors: the next event retries
      auto client = std::make_unique<Client>();
      client->fd = util::Fd(fd);
      Client* raw = client.get();
      try {
        events_.watch(fd, EPOLLIN, [this, raw](std::uint32_t ready) { on_ready(*raw, ready); });
      } catch (const util::SystemError&) {
        continue;  // epoll refused it: closed, the others go on
      }
      clients_.push_back(std::move(client));
      greet(*raw);
    }
  }

  // Without a secret a client is trusted at once; with one it gets the
  // challenge, and kProofTimeout to answer it.
  void greet(Client& client) {
    if (!secret_) {
      client.proven = true;
      return;
    }
    client.challenge = rendezvous::random_bytes(kStoreNonceSize);
    client.proof_deadline = events_.at(util::Clock::now() + kProofTimeout, [this, &client] {
      if (!client.proven) drop(client);
    });
    send(client, encode('H', client.challenge, ""));
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
      if (!client.proven && !take_proof(client)) return;
      std::string& messages = client.seal ? client.plain : client.input;
      if (client.seal) client.seal->open_into(client.input, client.plain);
      while (client.fd) {
        auto message = take_message(messages);
        if (!message) break;
        handle(client, *message);
      }
    } catch (const util::SystemError&) {
      drop(client);  // garbage, or a seal that does not open: this peer is not one of ours
    }
  }

  // The client's 'A': true once it proved the secret (the store then
  // answers with its own proof, its first sealed message); false while the
  // answer is incomplete. A wrong or oversized answer drops the client.
  bool take_proof(Client& client) {
    if (client.input.size() > kMostUnprovenInput) throw util::SystemError("too much before the proof");
    auto answer = take_message(client.input);
    if (!answer) return false;
    if (answer->op != 'A' || answer->key.size() != kStoreNonceSize ||
        !rendezvous::proofs_match(store_proof(*secret_, client.challenge, answer->key), answer->value))
      throw util::SystemError("a wrong proof");
    client.proven = true;
    events_.cancel(client.proof_deadline);
    client.seal.emplace(*secret_, client.challenge, answer->key, StoreSeal::End::kStore);
    reply(client, encode('K', "", ""));
    return true;
  }

  void handle(Client& client, const Message& message) {
    if (message.op == 'S') {
      if (!store(message.key, message.value)) return drop(client);
      reply(client, encode('K', message.key, ""));
      answer_waiters(message.key);
    } else if (message.op == 'C') {
      reply(client, encode('V', message.key, values_.count(message.key) > 0 ? "1" : "0"));
    } else if (message.op == 'G') {
      auto found = values_.find(message.key);
      if (found != values_.end()) reply(client, encode('V', message.key, found->second));
      else waiters_.emplace(message.key, &client);
    } else {
      drop(client);
    }
  }

  // Sets KEY unless the store would outgrow its bounds.
  bool store(const std::string& key, const std::string& value) {
    auto found = values_.find(key);
    std::size_t replaced = found == values_.end() ? 0 : found->first.size() + found->second.size();
    if (found == values_.end() && values_.size() >= kMostKeys) return false;
    if (stored_bytes_ - replaced + key.size() + value.size() > kMostStoredBytes) return false;
    stored_bytes_ = stored_bytes_ - replaced + key.size() + value.size();
    values_[key] = value;
    return true;
  }

  void answer_waiters(const std::string& key) {
    auto [first, last] = waiters_.equal_range(key);
    std::vector<Client*> waiting;
    for (auto it = first; it != last; ++it) waiting.push_back(it->second);
    waiters_.erase(first, last);
    for (Client* waiter : waiting) {
      if (waiter->fd) reply(*waiter, encode('V', key, values_[key]));
    }
  }

  // MESSAGE to CLIENT, sealed when its connection is.
  void reply(Client& client, const std::string& message) {
    send(client, client.seal ? client.seal->seal(message) : message);
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
    events_.cancel(client.proof_deadline);
    events_.unwatch(client.fd.get());
    client.fd.reset();
  }

  process::EventLoop events_;
  util::Fd listener_;
  std::optional<std::string> secret_;
  std::vector<std::unique_ptr<Client>> clients_;
  std::map<std::string, std::string> values_;
  std::size_t stored_bytes_ = 0;
  std::multimap<std::string, Client*> waiters_;
};

TcpStoreServer::TcpStoreServer(int port, std::optional<std::string> secret)
    : loop_(std::make_unique<Loop>(util::listen_tcp(port), std::move(secret))), thread_([this] { loop_->run(); }) {}

TcpStoreServer::~TcpStoreServer() {
  loop_->stop();
  thread_.join();
}

TcpStore::TcpStore(const std::string& host, int port, std::chrono::milliseconds timeout,
                   std::optional<std::string> secret)
    : host_(host), port_(port), timeout_(timeout), secret_(std::move(secret)) {
  connect(timeout);
}

void TcpStore::connect(std::chrono::milliseconds timeout) {
  auto deadline = util::Clock::now() + timeout;
  std::chrono::milliseconds backoff(10);
  for (;;) {
    socket_ = util::try_connect_tcp(host_, port_, deadline);
    if (socket_ && prove(deadline)) return;
    if (util::Clock::now() >= deadline)
      throw util::SystemError(fmt::format("cannot reach the store of rank 0 at {}:{} within {} s: rank 0 "
                                          "has not started, MASTER_ADDR/MASTER_PORT are wrong{}",
                                          host_, port_, timeout.count() / 1000,
                                          secret_ ? ", or what answers there does not hold the store's secret" : ""));
    ::poll(nullptr, 0, static_cast<int>(backoff.count()));
    backoff = std::min(backoff * 2, std::chrono::milliseconds(500));
  }
}

// With a secret: answers the store's challenge, and takes its first sealed
// message as its proof. False (the connection closed) when what answered
// is not the store holding the secret.
bool TcpStore::prove(util::Clock::time_point deadline) {
  raw_.clear();
  plain_.clear();
  seal_.reset();
  if (!secret_) return true;
  try {
    auto challenge = receive_plain(deadline);
    if (!challenge || challenge->op != 'H' || challenge->key.size() != kStoreNonceSize) return drop_connection();
    std::string nonce = rendezvous::random_bytes(kStoreNonceSize);
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - util::Clock::now());
    if (!util::send_all(socket_.get(), encode('A', nonce, store_proof(*secret_, challenge->key, nonce)), left))
      return drop_connection();
    seal_.emplace(*secret_, challenge->key, nonce, StoreSeal::End::kClient);
    auto proof = receive(deadline);
    if (proof && proof->op == 'K') return true;
  } catch (const util::SystemError&) {
    // closed, garbage or a seal that does not open: not the store
  }
  return drop_connection();
}

bool TcpStore::drop_connection() {
  socket_.reset();
  seal_.reset();
  return false;
}

bool TcpStore::contains(const std::string& key) { return request('C', key, "", timeout_) == "1"; }

std::string TcpStore::request(char op, const std::string& key, const std::string& value,
                              std::chrono::milliseconds timeout) {
  if (!socket_) connect(timeout_);
  std::string message = encode(op, key, value);
  if (!util::send_all(socket_.get(), seal_ ? seal_->seal(message) : message, timeout))
    throw util::SystemError(fmt::format("lost the store of rank 0 at {}:{}", host_, port_));
  auto deadline = util::Clock::now() + timeout;
  std::optional<Message> answer = receive(deadline);
  if (answer) return answer->value;
  // The answer may still come; a fresh connection keeps it from being
  // taken for the answer to a later request.
  drop_connection();
  throw util::SystemError(fmt::format("timed out after {} s waiting for '{}' in the store: a rank "
                                      "did not arrive",
                                      timeout.count() / 1000, key));
}

std::optional<Message> TcpStore::receive_plain(util::Clock::time_point deadline) {
  for (;;) {
    if (auto message = take_message(raw_)) return message;
    if (!read_some(deadline)) return std::nullopt;
  }
}

// The next message, opened when sealed; nullopt at DEADLINE. Throws
// SystemError when the store closed the connection or a seal fails.
std::optional<Message> TcpStore::receive(util::Clock::time_point deadline) {
  if (!seal_) return receive_plain(deadline);
  for (;;) {
    seal_->open_into(raw_, plain_);
    if (auto message = take_message(plain_)) return message;
    if (!read_some(deadline)) return std::nullopt;
  }
}

// False at DEADLINE; throws when the store is gone.
bool TcpStore::read_some(util::Clock::time_point deadline) {
  char chunk[64 * 1024];
  for (;;) {
    pollfd readable{socket_.get(), POLLIN, 0};
    int ready = ::poll(&readable, 1, util::millis_until(deadline));
    if (ready == 0) return false;
    ssize_t got = ::recv(socket_.get(), chunk, sizeof(chunk), 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) throw util::SystemError(fmt::format("lost the store of rank 0 at {}:{}", host_, port_));
    raw_.append(chunk, static_cast<std::size_t>(got));
    return true;
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

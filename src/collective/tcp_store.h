// A small key-value store over TCP for the workers of `dlaunch check`.
//
// gloo needs a rendezvous store to exchange its pair addresses; Debian's
// gloo ships file, hash (in-process) and Redis stores, none of which fits a
// job whose ranks only share MASTER_ADDR:MASTER_PORT. Rank 0 hosts this
// store on a thread (as torch's TCPStore does); every rank is a client.
// Given a secret (the pre-start gate's, from its launcher), only clients
// that prove it may use the store, and everything on the wire is sealed
// (collective/store_seal.h). Its size is bounded either way.
#pragma once

#include <chrono>
#include <gloo/rendezvous/store.h>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "collective/store_seal.h"
#include "util/fd.h"
#include "util/socket.h"

namespace dlaunch::collective {

// One message of the store's wire format (tcp_store.cc).
struct StoreMessage {
  char op = 0;
  std::string key;
  std::string value;
};

// Serves the store on PORT (every interface) until destroyed, on a thread
// of its own that never blocks on a client. With SECRET, a client that
// does not prove it within 10 s is dropped. Throws SystemError naming the
// port when it cannot be bound.
class TcpStoreServer {
 public:
  explicit TcpStoreServer(int port, std::optional<std::string> secret = std::nullopt);
  ~TcpStoreServer();
  TcpStoreServer(const TcpStoreServer&) = delete;
  TcpStoreServer& operator=(const TcpStoreServer&) = delete;

 private:
  class Loop;
  std::unique_ptr<Loop> loop_;
  std::thread thread_;
};

// A client, usable as gloo's rendezvous store. Connects with retries until
// TIMEOUT (with SECRET: to a store that proves it holds it too); get() and
// wait() block until the keys exist or TIMEOUT passes, then throw
// SystemError naming the keys (a rank that never arrived).
class TcpStore : public gloo::rendezvous::Store {
 public:
  TcpStore(const std::string& host, int port, std::chrono::milliseconds timeout,
           std::optional<std::string> secret = std::nullopt);

  void set(const std::string& key, const std::vector<char>& data) override;
  std::vector<char> get(const std::string& key) override;
  void wait(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys,
            const std::chrono::milliseconds& timeout) override;
  // get() with its own TIMEOUT.
  std::vector<char> get(const std::string& key, std::chrono::milliseconds timeout);
  // Whether KEY has been set, without waiting.
  bool contains(const std::string& key);

 private:
  void connect(std::chrono::milliseconds timeout);
  bool prove(util::Clock::time_point deadline);
  bool drop_connection();
  std::string request(char op, const std::string& key, const std::string& value,
                      std::chrono::milliseconds timeout);
  std::optional<StoreMessage> receive_plain(util::Clock::time_point deadline);
  std::optional<StoreMessage> receive(util::Clock::time_point deadline);
  bool read_some(util::Clock::time_point deadline);
  std::string host_;
  int port_;
  std::chrono::milliseconds timeout_;
  std::optional<std::string> secret_;
  util::Fd socket_;
  std::optional<StoreSeal> seal_;
  std::string raw_;    // received, not yet taken
  std::string plain_;  // opened, not yet taken

};

}  // namespace dlaunch::collective

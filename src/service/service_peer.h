// A connection to node 0's rendezvous service and what the service knows of
// it: shared by the service's loop and the parts it hands work to (the hang
// duty, the pre-start gate), which name launchers by these.
#pragma once

#include <list>
#include <string>

#include "wire/peer_connection.h"
#include "wire/session.h"

namespace dlaunch::rendezvous {

struct Peer {
  Peer(PeerConnection opened, std::string nonce)
      : connection(std::move(opened)), challenge(std::move(nonce)) {}
  PeerConnection connection;
  std::string challenge;
  Session session;             // sealed once a Join proved the token
  bool authenticated = false;  // proved the token (or none is required) in a Join
  int slot = -1;               // -1 until its first Join named its place in the job
  std::string host;
  bool closed = false;
  bool watching_writable = false;
  std::list<Peer*>::iterator unproven_entry;  // its place among the unproven, oldest first
};

}  // namespace dlaunch::rendezvous

// Writes the seed inputs of rendezvous_decoder_fuzz with the project's own
// encoders: one file per message type (a whole conversation in one file
// too), each led by the chunk-size byte the target reads first.
//
//   build-fuzz/fuzz/make_rendezvous_seeds fuzz/corpus/rendezvous_decoder_fuzz
//
// Run by hand when the protocol changes and commit what it writes.
#include <cstdio>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "wire/protocol.h"
#include "wire/token.h"

namespace {

using namespace dlaunch;
using namespace dlaunch::rendezvous;

rendezvous::Failure sample_failure() {
  rendezvous::Failure failure;
  failure.global_rank = 3;
  failure.local_rank = 1;
  failure.node_rank = 1;
  failure.host = "node02";
  failure.pid = 4242;
  failure.exit_code = 137;
  failure.signal = 9;
  failure.time = "2026-12-02T17:56:28+0000";
  failure.log_file = "logs/attempt_0/rank3/stderr.log";
  failure.error_message = "RuntimeError: CUDA out of memory";
  failure.last_lines = {"Traceback (most recent call last):", "RuntimeError: CUDA out of memory"};
  return failure;
}

rendezvous::World sample_world() {
  rendezvous::World world;
  world.round = 1;
  world.nproc_per_node = {4, 4, 2};
  world.heartbeat_timeout_ms = 30'000;
  world.worker_master_addr = "node01";
  world.worker_master_port = 29501;
  world.run_id = "1234.0";
  world.incarnation = "5f0c2a9e11d04b7a";
  world.node_slots = {0, 1, 2};  // no spares: one run of slots
  return world;
}

// A later round with spares: slot 1 lost, slot 4 took node rank 1 and slot
// 3 was benched, so the node slots are not one run and every list has one.
rendezvous::World sample_world_with_spares() {
  rendezvous::World world = sample_world();
  world.round = 3;
  world.node_slots = {0, 4, 2};
  world.spare_slots = {5, 6};
  world.benched_slots = {3};
  return world;
}

std::vector<std::string> sample_timeline() {
  return {"2026-12-02T17:56:28 lost contact with the launcher of node02: it exited or was killed",
          "2026-12-02T17:56:29 node04 failed 2 rounds in a row (--node-fail-limit 2): it is benched",
          "2026-12-02T17:56:40 round 3: node05 (spare) takes node rank 1; restart 3/5; the job was "
          "down 12.04 s"};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTPUT_DIR\n", argv[0]);
    return 2;
  }
  std::string dir = argv[1];

  // Fields set by name, so new fields in protocol.h keep this compiling.
  rendezvous::ChallengeMessage challenge;
  challenge.nonce = std::string(rendezvous::kChallengeSize, '\x5a');
  challenge.token_required = true;
  challenge.heartbeat_timeout_ms = 30'000;
  rendezvous::JoinMessage join;
  join.run_id = "1234.0";
  join.node_rank = 1;
  join.nnodes = 2;
  join.nproc = 4;
  join.host = "node02";
  join.dlaunch_version = DLAUNCH_VERSION;
  join.nonce = std::string(rendezvous::kChallengeSize, '\x6b');
  join.proof = rendezvous::join_proof("0123456789abcdef0123456789abcdef", challenge.nonce, join.nonce,
                                      rendezvous::signed_part(join));
  rendezvous::WelcomeMessage welcome;
  welcome.heartbeat_timeout_ms = 30'000;
  welcome.slot = 1;
  // Protocol 9: a launcher without a node rank asks for any slot.
  rendezvous::JoinMessage join_any_slot = join;
  join_any_slot.node_rank = rendezvous::kAnySlot;
  join_any_slot.proof = rendezvous::join_proof("0123456789abcdef0123456789abcdef", challenge.nonce,
                                               join_any_slot.nonce, rendezvous::signed_part(join_any_slot));
  // A spare's Join: its slot is past the training size, and it carries the
  // spare count and --min-nodes every launcher must share.
  rendezvous::JoinMessage join_spare = join;
  join_spare.round = 2;
  join_spare.node_rank = 4;
  join_spare.nnodes = 3;
  join_spare.spare_nodes = 4;
  join_spare.min_nodes = 2;
  join_spare.host = "node05";
  join_spare.proof = rendezvous::join_proof("0123456789abcdef0123456789abcdef", challenge.nonce,
                                            join_spare.nonce, rendezvous::signed_part(join_spare));
  rendezvous::JoinMessage join_preflight_failed = join;
  join_preflight_failed.proof.clear();
  join_preflight_failed.allow_uneven = true;
  join_preflight_failed.preflight_error = "python3 not found in PATH";
  rendezvous::TextMessage abort_message;
  abort_message.reason = "node rank(s) 1 did not join within 300 s";
  rendezvous::TextMessage stop;
  stop.reason = "rank 3 on node02 failed";
  rendezvous::OutcomeMessage succeeded;
  succeeded.outcome.succeeded = true;
  rendezvous::OutcomeMessage failed;
  failed.outcome.failure = sample_failure();
  rendezvous::OutcomeMessage preempted;
  preempted.outcome.stop_signal = 10;
  preempted.outcome.preempted = true;
  rendezvous::VerdictMessage verdict_ok;
  rendezvous::VerdictMessage verdict_failed;
  verdict_failed.round = 1;
  verdict_failed.verdict.kind = rendezvous::Verdict::Kind::kFailed;
  verdict_failed.verdict.exit_code = 137;
  verdict_failed.verdict.failure = sample_failure();
  rendezvous::VerdictMessage verdict_restart;
  verdict_restart.verdict.kind = rendezvous::Verdict::Kind::kRestart;
  verdict_restart.verdict.exit_code = 1;
  verdict_restart.verdict.failure = sample_failure();
  verdict_restart.verdict.timeline = sample_timeline();
  // Restarts were left, but no launcher was left to take the lost node's place.
  rendezvous::VerdictMessage verdict_not_restarted;
  verdict_not_restarted.round = 3;
  verdict_not_restarted.verdict.kind = rendezvous::Verdict::Kind::kFailed;
  verdict_not_restarted.verdict.exit_code = 1;
  verdict_not_restarted.verdict.failure = sample_failure();
  verdict_not_restarted.verdict.not_restarted =
      "no spare left: 2 nodes remain, and the job needs at least 3 (--min-nodes)";
  verdict_not_restarted.verdict.timeline = sample_timeline();
  // A side of a split that keeps too few launchers stops and leaves the job to the other.
  rendezvous::VerdictMessage verdict_stepped_aside = verdict_not_restarted;
  verdict_stepped_aside.verdict.stepped_aside = true;
  // A launcher node 0 dropped while it was unreachable.
  rendezvous::TextMessage fenced;
  fenced.round = 2;
  fenced.reason = "node 0 dropped this launcher in round 2 (node 1 (node02) sent nothing for 30 s); the job goes on "
                  "without it";

  // Hang forensics: progress with steps, a capture, a node's stacks, an observer's Join.
  rendezvous::ProgressMessage progress;
  progress.round = 1;
  progress.idle_ms = 12'345;
  progress.steps = {{4, 1000}, {5, 998}, {6, 1000}, {7, -1}};
  rendezvous::CaptureMessage capture;
  capture.round = 1;
  capture.id = 2;
  capture.hang = true;
  rendezvous::StacksMessage stacks;
  stacks.id = 2;
  stacks.stacks =
      R"([{"rank":2,"local_rank":0,"node_rank":1,"host":"node02","pid":4242,)"
      R"("python_threads":[{"thread":"0x7f00","main":true,"frames":[{"function":"<module>","file":"train.py","line":9},)"
      R"({"function":"load_batch","file":"train.py","line":3}]}],)"
      R"("native_threads":[{"thread":"4242","main":true,"frames":[{"function":"read","file":"libc.so.6","address":"0x7f01"}]}],)"
      R"("problems":[]}])";
  rendezvous::JoinMessage join_observer = join;
  join_observer.observer = true;
  join_observer.node_rank = 0;
  join_observer.proof = rendezvous::join_proof("0123456789abcdef0123456789abcdef", challenge.nonce,
                                               join_observer.nonce, rendezvous::signed_part(join_observer));

  // Protocol 6: interfaces in the Join, probes and the gate.
  rendezvous::JoinMessage join_interfaces = join;
  net::Interface eth;
  eth.name = "eth0";
  eth.index = 2;
  eth.addresses = {"10.0.0.2"};
  eth.up = true;
  eth.speed_mbps = 25000;
  eth.mtu = 9000;
  eth.kind = "veth";
  net::Interface docker = eth;
  docker.name = "docker0";
  docker.addresses = {"172.17.0.1"};
  docker.kind = "bridge";
  docker.excluded = "a container runtime's bridge";
  join_interfaces.interfaces = {eth, docker};
  join_interfaces.probe_port = 41000;
  join_interfaces.free_port = 42000;
  rendezvous::ProbeMessage probe{0, {{1, "10.0.0.2", 41000}, {2, "10.254.2.1", 41001}}};
  rendezvous::ProbeReportMessage probe_report{0, {{1, "10.0.0.2", true}, {2, "10.254.2.1", false}}};
  rendezvous::ProbeHelloMessage hello{"job-1", 0, 1, std::string(rendezvous::kChallengeSize, '\x03'),
                                      std::string(32, '\x04')};
  rendezvous::ProbeAckMessage ack{1, std::string(32, '\x05')};
  rendezvous::GateMessage gate{0, 1, 3, "10.0.0.1", 29400, 4u << 20, 60000, "eth0", std::string(32, '\x07')};
  rendezvous::GateReportMessage gate_report{
      0, R"({"gate":1,"rank":1,"host":"node2","allreduce":true,"links":[{"peer":0,"gbps":9.8}],"error":"","gpus":null})",
      ""};
  rendezvous::World world_interfaces = sample_world();
  world_interfaces.ifnames.assign(world_interfaces.nproc_per_node.size(), "eth0");
  world_interfaces.ifaddresses.assign(world_interfaces.nproc_per_node.size(), "10.0.0.1");

  std::vector<std::pair<std::string, std::string>> frames = {
      {"join_interfaces",
       rendezvous::encode_frame(rendezvous::MessageType::kJoin, rendezvous::encode(join_interfaces))},
      {"probe", rendezvous::encode_frame(rendezvous::MessageType::kProbe, rendezvous::encode(probe))},
      {"probe_report",
       rendezvous::encode_frame(rendezvous::MessageType::kProbeReport, rendezvous::encode(probe_report))},
      {"probe_hello", rendezvous::encode_frame(rendezvous::MessageType::kProbeHello, rendezvous::encode(hello))},
      {"probe_ack", rendezvous::encode_frame(rendezvous::MessageType::kProbeAck, rendezvous::encode(ack))},
      {"gate", rendezvous::encode_frame(rendezvous::MessageType::kGate, rendezvous::encode(gate))},
      {"gate_report",
       rendezvous::encode_frame(rendezvous::MessageType::kGateReport, rendezvous::encode(gate_report))},
      {"world_interfaces",
       rendezvous::encode_frame(rendezvous::MessageType::kWorld, rendezvous::encode(world_interfaces))},
      {"challenge",
       rendezvous::encode_frame(rendezvous::MessageType::kChallenge, rendezvous::encode(challenge))},
      {"join", rendezvous::encode_frame(rendezvous::MessageType::kJoin, rendezvous::encode(join))},
      {"join_spare", rendezvous::encode_frame(rendezvous::MessageType::kJoin, rendezvous::encode(join_spare))},
      {"join_any_slot",
       rendezvous::encode_frame(rendezvous::MessageType::kJoin, rendezvous::encode(join_any_slot))},
      {"join_preflight_failed",
       rendezvous::encode_frame(rendezvous::MessageType::kJoin, rendezvous::encode(join_preflight_failed))},
      {"welcome", rendezvous::encode_frame(rendezvous::MessageType::kWelcome, rendezvous::encode(welcome))},
      {"heartbeat", rendezvous::encode_frame(rendezvous::MessageType::kHeartbeat, "")},
      {"world",
       rendezvous::encode_frame(rendezvous::MessageType::kWorld, rendezvous::encode(sample_world()))},
      {"world_spares", rendezvous::encode_frame(rendezvous::MessageType::kWorld,
                                                rendezvous::encode(sample_world_with_spares()))},
      {"abort", rendezvous::encode_frame(rendezvous::MessageType::kAbort, rendezvous::encode(abort_message))},
      {"failure",
       rendezvous::encode_frame(rendezvous::MessageType::kFailure, rendezvous::encode(sample_failure()))},
      {"stop", rendezvous::encode_frame(rendezvous::MessageType::kStop, rendezvous::encode(stop))},
      {"outcome_succeeded",
       rendezvous::encode_frame(rendezvous::MessageType::kOutcome, rendezvous::encode(succeeded))},
      {"outcome_failed",
       rendezvous::encode_frame(rendezvous::MessageType::kOutcome, rendezvous::encode(failed))},
      {"outcome_preempted",
       rendezvous::encode_frame(rendezvous::MessageType::kOutcome, rendezvous::encode(preempted))},
      {"verdict_succeeded",
       rendezvous::encode_frame(rendezvous::MessageType::kVerdict, rendezvous::encode(verdict_ok))},
      {"verdict_failed",
       rendezvous::encode_frame(rendezvous::MessageType::kVerdict, rendezvous::encode(verdict_failed))},
      {"verdict_restart",
       rendezvous::encode_frame(rendezvous::MessageType::kVerdict, rendezvous::encode(verdict_restart))},
      {"verdict_not_restarted",
       rendezvous::encode_frame(rendezvous::MessageType::kVerdict, rendezvous::encode(verdict_not_restarted))},
      {"progress", rendezvous::encode_frame(rendezvous::MessageType::kProgress, rendezvous::encode(progress))},
      {"capture", rendezvous::encode_frame(rendezvous::MessageType::kCapture, rendezvous::encode(capture))},
      {"stacks", rendezvous::encode_frame(rendezvous::MessageType::kStacks, rendezvous::encode(stacks))},
      {"stacks_end", rendezvous::encode_frame(rendezvous::MessageType::kStacksEnd, rendezvous::encode(stop))},
      {"join_observer",
       rendezvous::encode_frame(rendezvous::MessageType::kJoin, rendezvous::encode(join_observer))},
      // Protocol 7: a later generation's frames, a launcher fenced, its workers running, a side that steps aside.
      {"fenced", rendezvous::encode_frame(rendezvous::MessageType::kFenced, rendezvous::encode(fenced), 2)},
      {"started", rendezvous::encode_frame(rendezvous::MessageType::kStarted, "", 3)},
      {"verdict_stepped_aside",
       rendezvous::encode_frame(rendezvous::MessageType::kVerdict, rendezvous::encode(verdict_stepped_aside), 3)},
  };
  std::string conversation;
  for (const auto& [name, frame] : frames) conversation += frame;
  frames.emplace_back("conversation", conversation);

  // The leading byte is the chunk size minus one (mod 64): whole frames for
  // most seeds, 1-byte and 7-byte chunks for the conversation.
  for (const auto& [name, frame] : frames) {
    std::ofstream(dir + "/" + name + ".bin", std::ios::binary) << '\x3f' << frame;
  }
  std::ofstream(dir + "/conversation_1byte_chunks.bin", std::ios::binary) << '\x00' << conversation;
  std::ofstream(dir + "/conversation_7byte_chunks.bin", std::ios::binary) << '\x06' << conversation;
  std::printf("wrote %zu seeds to %s\n", frames.size() + 2, dir.c_str());
  return 0;
}

// A processor in a process of its own, for processor_kill_test: it copies
// INPUT to OUTPUT as f(v) = "f(" + v + ")" until SIGTERM, and may be killed
// at any moment. DELAY_US slows each record down, so that the work spreads
// over many lifetimes.
//
//   exactly_processor_child BOOTSTRAP INPUT OUTPUT GROUP TRANSACTIONAL_ID
//                           [DELAY_US]
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "exactly/exactly.h"

namespace {

volatile std::sig_atomic_t g_stop = 0;

void OnTerm(int) { g_stop = 1; }

}  // namespace

int main(int argc, char** argv) {
  if (argc != 6 && argc != 7) {
    std::fprintf(stderr,
                 "usage: %s BOOTSTRAP INPUT OUTPUT GROUP TRANSACTIONAL_ID "
                 "[DELAY_US]\n",
                 argv[0]);
    return 2;
  }
  const auto delay =
      std::chrono::microseconds(argc == 7 ? std::atol(argv[6]) : 0);
  std::signal(SIGTERM, OnTerm);
  const std::string output = argv[3];
  exactly::ProcessorOptions o;
  o.bootstrap_servers = argv[1];
  o.input_topics = {argv[2]};
  o.group_id = argv[4];
  o.transactional_id = argv[5];
  o.max_batch_records = 50;
  o.max_batch_time = std::chrono::milliseconds(50);
  o.consumer_properties["session.timeout.ms"] = "6000";
  o.consumer_properties["heartbeat.interval.ms"] = "500";
  o.producer_properties["transaction.timeout.ms"] = "10000";
  auto processor = exactly::Processor::Create(
      o, [&output, delay](const exactly::Message& in, exactly::Emitter& out) {
        if (delay.count() > 0) std::this_thread::sleep_for(delay);
        return out.Send({.topic = output,
                         .key = in.key(),
                         .value = "f(" + std::string(in.value()) + ")"});
      });
  if (!processor.ok()) {
    std::fprintf(stderr, "processor_child: %s\n",
                 processor.status().ToString().c_str());
    return 1;
  }
  while (g_stop == 0) {
    absl::Status s = (*processor)->RunOnce();
    if (!s.ok() && exactly::NextTxnAction(s) != exactly::TxnAction::kRetry) {
      std::fprintf(stderr, "processor_child: %s\n", s.ToString().c_str());
      return 1;
    }
  }
  absl::Status s = (*processor)->Close();
  if (!s.ok()) {
    std::fprintf(stderr, "processor_child: close: %s\n", s.ToString().c_str());
    return 1;
  }
  return 0;
}

// The workloads the checker runs: each drives one of the SDK's ways to write
// exactly once, records in a History what it did and what the client said,
// and returns it for Check(). Each runs until `duration` has passed or it
// has made `transactions` transactions, whichever comes first.
//
//   Transact   TransactionalProducer::Transact, some transactions aborted on
//              purpose (the function returns an error after its sends)
//   Verbs      Begin / Send / Commit / Abort by hand, as an application
//              following librdkafka's rules would (and as the Python
//              bindings' `with p.transaction()` does)
//   Processor  the consume-transform-produce loop over pre-filled input,
//              with a second instance joining and leaving the group
//   Spool      the spooled producer: every Send that returned OK counts as
//              committed, one record per "attempt"
//   RawLibrdkafka  Verbs on librdkafka's own API, no SDK: as is, and with
//              the SDK's defence applied by hand (a new epoch after an abort
//              that purged possibly persisted records), to confirm the
//              diagnosis of lost records after aborts
#ifndef EXACTLY_TESTS_EOS_WORKLOAD_H_
#define EXACTLY_TESTS_EOS_WORKLOAD_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "eos/history.h"

namespace exactly::eos {

struct WorkloadOptions {
  std::string bootstrap_servers;
  std::string topic;  // where the records go; created by the caller
  int32_t partitions = 2;
  // Names the writer in every record and is the base of its
  // transactional.id: unique per run.
  std::string writer;
  uint64_t seed = 1;
  int64_t transactions = 1000;
  std::chrono::milliseconds duration{15000};
  double abort_probability = 0.3;  // Transact and Verbs
  int32_t min_records_per_transaction = 1;
  int32_t max_records_per_transaction = 6;
  // Record i of a transaction goes to partition i % partitions (else a
  // random one). With a fixed count every transaction then sends batches of
  // the same sizes, so a reused sequence range matches an old batch exactly:
  // the shape in which librdkafka's reuse loses records instead of failing.
  bool round_robin_partitions = false;
  // Processor: the input topic (created and filled by the workload), its
  // record count, and the consumer group.
  std::string input_topic;
  int64_t input_records = 2000;
  // Spool: its directory (created by the caller, empty).
  std::string spool_dir;
  // Called once the workload's own setup is done (the Processor's input is
  // written and read back), before the work it checks: the checker starts its
  // nemesis here, so that faults meant for the workload do not fail its setup.
  std::function<void()> on_ready;
};

// Calls w.on_ready, if set.
inline void Ready(const WorkloadOptions& w) {
  if (w.on_ready) w.on_ready();
}

struct WorkloadResult {
  std::map<AttemptId, Attempt> attempts;
  // What went wrong outside the checker's scope (a client that could not
  // be created, a processor that never finished its input): the run is
  // void, the test fails with these.
  std::vector<std::string> errors;
  int64_t epoch_bumps = 0;  // SDK: new epochs started after risky aborts
  int64_t rebuilds = 0;
  std::vector<std::string> topics;  // what the checker must read
};

using Workload = WorkloadResult (*)(const WorkloadOptions&);

WorkloadResult RunTransact(const WorkloadOptions& options);
WorkloadResult RunVerbs(const WorkloadOptions& options);
WorkloadResult RunProcessor(const WorkloadOptions& options);
WorkloadResult RunSpool(const WorkloadOptions& options);
WorkloadResult RunRawLibrdkafka(const WorkloadOptions& options);
WorkloadResult RunRawLibrdkafkaWithWorkaround(const WorkloadOptions& options);

}  // namespace exactly::eos

#endif  // EXACTLY_TESTS_EOS_WORKLOAD_H_
